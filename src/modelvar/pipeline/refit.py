"""Refit recorded runs and compare with their stored predictions (``modelvar verify --refit N``).

A tool that measures reproducibility checks its own: a random sample of the runs that a results
folder's prediction files hold is fitted again, each from what its fit job recorded in the
file's metadata (root seed, runs per repeat, test fraction, base hyperparameters, epochs) and
the prepared dataset, through the same code path as the fit job
(:func:`modelvar.pipeline.fitting.fit_repeat_arrays` for that one run: its test set, rows,
perturbations, hyperparameters and model seed all come from the named seed streams). Its rows
are encoded as the fit job stores them (:meth:`PredictionsWriter.encode`) and compared:

* **exact**: labels and stored probabilities (or per-sample statistics) bit for bit;
* otherwise how far: the share of test samples whose label differs and the largest absolute
  difference of a stored probability (statistic).

A run stored on another machine may legitimately differ in its last bits (docs/decisions.md,
"Determinism"; the runs table's ``platform`` column says where it ran); a tampered or reordered
file differs in labels. The sample is drawn from the stream ``(seed, "refit-sample")``, so the
same folder and seed refit the same runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class RefitResult:
    path: str
    cell: str
    repeat: int
    run: int
    exact: bool
    labels_changed: float  # share of test samples whose predicted label differs
    max_abs_diff: float    # of the stored probabilities or statistics
    reordered: bool = False  # the stored rows are not in the order the fit job writes

    def describe(self) -> str:
        where = f"{self.path} cell {self.cell} repeat {self.repeat} run {self.run}"
        if self.exact:
            return f"{where}: reproduced exactly"
        return (f"{where}: differs: {100 * self.labels_changed:.2f} % of labels, stored "
                f"values by up to {self.max_abs_diff:.3g}"
                + ("; its rows are out of order" if self.reordered else ""))


def recorded_runs(results_dir: str | Path) -> list[tuple[Path, int, str, int, int]]:
    """Every run the prediction files hold: (file, row group, cell, repeat, run)."""
    from modelvar.pipeline.predictions import file_metadata

    out = []
    for path in sorted((Path(results_dir) / "predictions").rglob("*.parquet")):
        if path.name.startswith("."):
            continue
        _, groups = file_metadata(path)
        for index, (cell, repeat, start, stop) in enumerate(groups):
            out += [(path, index, cell, int(repeat), run) for run in range(start, stop)]
    return out


def _stored_rows(path: Path, row_group: int, run: int) -> dict[str, np.ndarray]:
    import pyarrow.parquet as pq

    table = pq.ParquetFile(path).read_row_group(row_group)
    mask = table.column("run").to_numpy() == run
    return {name: table.column(name).to_numpy()[mask] for name in table.column_names
            if name not in ("cell", "repeat")}


def _prepared(results_dir: str | Path, dataset: str):
    """The prepared dataset's arrays, as the fit job reads them."""
    from modelvar.data.arrays import read_arrays

    datasets = Path(results_dir) / "datasets"
    return read_arrays(datasets / f"{dataset}.parquet", datasets / f"{dataset}.json")


def refit_run(results_dir: str | Path, path: Path, row_group: int, cell: str, repeat: int,
              run: int, *, data=None) -> RefitResult:
    """Fit one recorded run again and compare it with its stored rows (module docstring);
    ``data``: the prepared dataset's arrays when the caller has read them already."""
    from modelvar.pipeline.fitting import fit_repeat_arrays
    from modelvar.pipeline.predictions import PredictionsWriter, file_metadata
    from modelvar.study.cells import Cell

    head, _ = file_metadata(path)
    fit = head.get("fit")
    if fit is None:
        raise ValueError(f"{path}: written by a modelvar that did not record how to refit its "
                         "runs; run the fit job again to refit it")
    from modelvar.models.registry import register_from_settings

    register_from_settings(head["classifier"], fit)  # a declared classifier's declaration
    data = data if data is not None else _prepared(results_dir, head["dataset"])
    result = fit_repeat_arrays(
        data, classifier=head["classifier"], cell=Cell.parse(cell), repeat=repeat, runs=[run],
        n_runs=fit["n_runs"], test_fraction=fit["test_fraction"], root_seed=fit["root_seed"],
        base_hparams=fit["base_hparams"], epochs=fit["epochs"], form=head["probabilities"])
    writer = PredictionsWriter(path, dataset=head["dataset"], classifier=head["classifier"],
                               classes=head["classes"], form=head["probabilities"],
                               n_rows=len(data.y))
    fresh = writer.encode(result.runs, result.samples, result.y_true, result.preds,
                          result.proba, result.stats)
    stored = _stored_rows(path, row_group, run)
    root = Path(results_dir)
    where = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    if set(fresh) != set(stored) or len(stored["sample"]) != len(fresh["sample"]):
        return RefitResult(where, cell, repeat, run, False, 1.0, float("inf"))
    same_rows = np.array_equal(stored["sample"], fresh["sample"])
    exact = same_rows and all(np.array_equal(stored[c], np.asarray(fresh[c], stored[c].dtype))
                              for c in fresh)
    # compare by sample, so that reordered rows show as what they are
    order_s, order_f = np.argsort(stored["sample"]), np.argsort(fresh["sample"])
    labels = float(np.mean(stored["y_pred"][order_s] != fresh["y_pred"][order_f]))
    values = [c for c in fresh if c not in ("run", "sample", "y_true", "y_pred")]
    diff = max((float(np.max(np.abs(stored[c][order_s].astype(np.float64)
                                    - np.asarray(fresh[c], np.float64)[order_f]), initial=0.0))
                for c in values), default=0.0)
    return RefitResult(where, cell, repeat, run, exact, labels, diff, not same_rows)


def refit_sample(results_dir: str | Path, n: int, *, seed: int = 0) -> list[RefitResult]:
    """Refit ``n`` runs drawn at random (without replacement; all when fewer) from the runs
    the prediction files of ``results_dir`` hold."""
    from modelvar.seeding import stream

    if n < 1:
        raise ValueError(f"--refit must be a positive number of runs, got {n}")
    runs = recorded_runs(results_dir)
    if not runs:
        raise ValueError(f"{results_dir}: no prediction files to refit (predictions/ is empty)")
    rng = stream(seed, "refit-sample").generator()
    picked = sorted(rng.choice(len(runs), size=min(n, len(runs)), replace=False))
    from modelvar.pipeline.predictions import file_metadata

    datasets: dict[str, object] = {}  # each prepared dataset read once
    out = []
    for i in picked:
        name = file_metadata(runs[i][0])[0]["dataset"]
        if name not in datasets:
            datasets[name] = _prepared(results_dir, name)
        out.append(refit_run(results_dir, *runs[i], data=datasets[name]))
    return out


def format_refits(results: list[RefitResult], total: int, seed: int) -> str:
    exact = sum(r.exact for r in results)
    lines = [f"refit {len(results)} of {total} recorded runs (sample seed {seed}): {exact} "
             f"reproduce their stored predictions exactly, {len(results) - exact} differ"]
    lines += [f"  {r.describe()}" for r in results if not r.exact]
    return "\n".join(lines)
