"""The aggregated results dataset: every per-cell table of a study in one tidy, partitioned
parquet dataset for users' own analysis.

Layout (hive partitioning, readable with ``pandas.read_parquet(<dir>)`` or pyarrow/polars/duckdb):
``<results>/aggregated/<table>/dataset=<name>/part-0.parquet`` for the tables ``summary``,
``per_run``, ``agreement``, ``per_sample``, ``runs`` and, for grouped datasets, ``grouped`` and
``disparities``. Each row gains the cell's perturbation levels as columns (``data``,
``categorical``, ``hparam``, ``downsample``, ``model_seed``), so figures and users can facet by
family without parsing cell ids. The ``dataset`` column is dropped from the file: it is the
partition key and comes back on reading.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from modelvar.pipeline.cells import Cell
from modelvar.table_files import Manifest, read_parquet

LEVEL_COLUMNS = ("data", "categorical", "hparam", "downsample", "model_seed")


def with_levels(frame: pd.DataFrame) -> pd.DataFrame:
    """Add one column per perturbation family, parsed from the ``cell`` column."""
    if "cell" not in frame.columns:
        raise ValueError("table has no 'cell' column")
    levels = {cid: Cell.parse(cid).levels() for cid in frame["cell"].unique()}
    out = frame.copy()
    for family in LEVEL_COLUMNS:
        out[family] = out["cell"].map(lambda c, f=family: levels[c][f])
    return out


def combine(paths: list[str | Path], dataset: str) -> pd.DataFrame:
    """Concatenate one dataset's per-cell tables, checking they all belong to ``dataset``."""
    if not paths:
        raise ValueError(f"no tables to aggregate for {dataset!r}")
    frame = pd.concat([read_parquet(p) for p in paths], ignore_index=True)
    others = sorted(set(frame["dataset"].unique()) - {dataset})
    if others:
        raise ValueError(f"tables of dataset(s) {others} given for dataset {dataset!r}")
    return with_levels(frame)


def partition_path(out_dir: str | Path, table: str, dataset: str) -> Path:
    return Path(out_dir) / table / f"dataset={dataset}" / "part-0.parquet"


def write_partition(frame: pd.DataFrame, out_dir: str | Path, table: str, dataset: str,
                    manifest: Manifest | None = None) -> Path:
    path = partition_path(out_dir, table, dataset)
    manifest = manifest if manifest is not None else Manifest(None, rule="aggregate")
    return manifest.write_parquet(frame.drop(columns=["dataset"]), path)


def read_table(out_dir: str | Path, table: str, dataset: str | None = None) -> pd.DataFrame:
    """One aggregated table (all datasets, or one), with the ``dataset`` column restored."""
    if dataset is not None:
        frame = read_parquet(partition_path(out_dir, table, dataset))
        return frame.assign(dataset=dataset)
    frame = read_parquet(Path(out_dir) / table)
    frame["dataset"] = frame["dataset"].astype(str)
    return frame


def study_summary(results_dir: str | Path, datasets: list[str]) -> str:
    """A short text summary of a finished run, from the aggregated ``runs`` tables."""
    lines = ["modelvar run summary"]
    total_fits, total_seconds = 0, 0.0
    for ds in datasets:
        path = partition_path(Path(results_dir) / "aggregated", "runs", ds)
        if not path.exists():
            lines.append(f"  {ds}: no aggregated runs table ({path})")
            continue
        runs = read_parquet(path, columns=["classifier", "cell", "repeat", "accuracy",
                                               "fit_seconds"])
        total_fits += len(runs)
        total_seconds += float(runs["fit_seconds"].sum())
        by_clf = runs.groupby("classifier")["accuracy"].mean()
        lines.append(
            f"  {ds}: {len(runs)} fits ({runs['cell'].nunique()} cells × "
            f"{runs['repeat'].nunique()} repeats), fit time {runs['fit_seconds'].sum():.1f} s; "
            "mean accuracy " + ", ".join(f"{c} {a:.3f}" for c, a in by_clf.items())
        )
    lines.append(f"  total: {total_fits} fits, {total_seconds:.1f} s of fitting")
    lines.append(f"  figures: {results_dir}/<dataset>/figures/, tables: {results_dir}/aggregated/")
    return "\n".join(lines)
