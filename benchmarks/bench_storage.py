"""Benchmark: bytes per prediction row, dense vs compact, and the full study's storage (issue 13:
<= 100 GB).

    python benchmarks/bench_storage.py

Fits real fit jobs (lr-sgd and xgb, 3 cells x 2 repeats x 10 runs) on the embedded datasets and
writes their predictions in both forms, then reports bytes per row against the plan's constants
(``modelvar.planning.plan``: ids + labels, one float32 column per class but one, or the compact
statistics). For many classes, where the dense form would cost ≈ 4.3·(C − 1) bytes a row, the
compact form is measured on synthetic peaked probabilities (C = 100, 355, 1000). Last, the plan's
storage estimate of the full-study config, as a ratio of the goal.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import tempfile
from pathlib import Path

import numpy as np

from modelvar.data import load
from modelvar.data.arrays import DataArrays
from modelvar.pipeline.fitting import fit_job
from modelvar.pipeline.predictions import PredictionsWriter
from modelvar.planning.plan import bytes_per_row
from modelvar.planning.plan_report import dataset_totals
from modelvar.running.workflow_config import plan_of_command_line
from modelvar.study.cells import Cell

REPO = Path(__file__).resolve().parents[1]
CELLS = [Cell(model_seed="per-run"), Cell(data=("rel", 0.2), model_seed="per-run"),
         Cell(downsample=0.5, model_seed="per-run")]
GOAL_BYTES = 100e9


def real_rows(tmp: Path) -> list[tuple]:
    out = []
    for name in ("credit-g", "vehicle", "anneal", "car"):
        data = DataArrays.from_dataset(load(name, {"source": "embedded"}))
        for clf in ("lr-sgd", "xgb"):
            sizes = {}
            for form in ("dense", "compact"):
                path = tmp / f"{name}-{clf}-{form}.parquet"
                fit_job(data, classifier=clf, cells=CELLS, repeats=[0, 1], n_runs=10,
                        test_fraction=0.25, root_seed=1, predictions_out=path,
                        runs_out=tmp / "runs.parquet", form=form, progress_seconds=1e9)
                rows = 3 * 2 * 10 * int(np.ceil(len(data.y) * 0.25))
                sizes[form] = path.stat().st_size / rows
            out.append((name, clf, len(data.classes), sizes["dense"], sizes["compact"]))
    return out


def synthetic_compact(tmp: Path, c: int, n: int = 20_000, k: int = 10,
                      one_hot: bool = False) -> float:
    """Bytes a row of compact predictions of peaked synthetic probabilities, or (``one_hot``)
    of their argmax's one-hot vectors, as svm-sgd's hinge loss gives."""
    rng = np.random.default_rng(c)
    y = rng.integers(0, c, n)
    logits = rng.normal(0, 1, (k, n, c)) * 3
    logits[np.arange(k)[:, None], np.arange(n)[None, :], y[None, :]] += 4
    proba = np.exp(logits - logits.max(axis=2, keepdims=True))
    proba /= proba.sum(axis=2, keepdims=True)
    if one_hot:
        proba = np.eye(c, dtype=proba.dtype)[proba.argmax(axis=2)]
    path = tmp / f"syn{c}{'-one-hot' if one_hot else ''}.parquet"
    writer = PredictionsWriter(path, dataset="s", classifier="mlp",
                               classes=[str(i) for i in range(c)], form="compact", n_rows=n)
    writer.write("dnone_cnone_hnone_down100_seedrun", 0, np.arange(k), np.arange(n), y,
                 proba.argmax(axis=2), proba)
    writer.close()
    return path.stat().st_size / (k * n)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        print(f"{'dataset':10s} {'clf':7s} {'C':>4s} {'dense B/row':>12s} {'plan':>6s} "
              f"{'compact B/row':>14s} {'plan':>6s}")
        for name, clf, c, dense, compact in real_rows(tmp):
            print(f"{name:10s} {clf:7s} {c:4d} {dense:12.2f} {bytes_per_row(c, 'dense'):6.2f} "
                  f"{compact:14.2f} {bytes_per_row(c, 'compact'):6.2f}")
        for c in (100, 355, 1000):
            compact = synthetic_compact(tmp, c)
            dense = f"({bytes_per_row(c, 'dense'):.0f} dense, plan)"
            print(f"{'synthetic':10s} {'':7s} {c:4d} {dense:>19s} "
                  f"{compact:7.2f} {bytes_per_row(c, 'compact'):6.2f}")
        for c in (30, 100, 355, 1000):  # svm-sgd's hinge loss: one-hot probabilities
            compact = synthetic_compact(tmp, c, one_hot=True)
            print(f"{'one-hot':10s} {'':7s} {c:4d} {'':>19s} "
                  f"{compact:7.2f} {bytes_per_row(c, 'compact', one_hot=True):6.2f}")
    plan, config = plan_of_command_line(["--configfile", str(REPO / "config/full-study.yaml"),
                                         str(REPO / "config/openml/seed-study.yaml")])
    totals = dataset_totals(plan, config)
    storage = sum(t.storage for t in totals)
    dense_all = sum(cp.prediction_rows * bytes_per_row(ds.shape.n_classes, "dense")
                    for ds in plan.datasets.values() for cp in ds.classifiers.values())
    print(f"\nfull study (plan): {storage / 1e9:.1f} GB in all ({storage / GOAL_BYTES:.2f} of the "
          f"{GOAL_BYTES / 1e9:.0f} GB goal); all-dense predictions would be "
          f"{dense_all / 1e9:,.0f} GB")


if __name__ == "__main__":
    main()
