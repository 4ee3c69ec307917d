"""Prediction files (issue 13): compact storage that loses nothing any metric needs, run blocks
that read back as one repeat, bounded reads, and the metrics job on top of them."""

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from modelvar.metrics.probabilistic import per_run_metrics
from modelvar.pipeline.metric_tables import TABLES, metrics_job, repeat_columns
from modelvar.pipeline.predictions import PredictionsWriter, iter_repeats, read_predictions


def runs_of(rng, k, n, c):
    """k runs' probabilities over c classes (peaked, as a trained model's), their labels, truth."""
    alpha = np.full(c, 0.3)
    proba = rng.dirichlet(alpha, size=(k, n))
    y_true = rng.integers(0, c, n)
    preds = proba.argmax(axis=2)
    return y_true, preds, proba


def write(path, form, blocks, *, classes, cell="dnone_cnone_hnone_down100_seedrun"):
    """blocks: [(repeat, runs, samples, y_true, preds, proba)]"""
    writer = PredictionsWriter(path, dataset="d", classifier="mlp", classes=classes, form=form,
                               n_rows=10_000)
    for repeat, runs, samples, y_true, preds, proba in blocks:
        writer.write(cell, repeat, np.asarray(runs), samples, y_true, preds, proba)
    writer.close()
    return path


@pytest.mark.parametrize("c", [2, 10, 355, 1000])
def test_every_probabilistic_metric_from_the_compact_form_equals_the_dense_computation(
        tmp_path, c):
    rng = np.random.default_rng(c)
    k, n = 4, 300
    y_true, preds, proba = runs_of(rng, k, n, c)
    samples = np.arange(n) * 3
    classes = [f"c{i}" for i in range(c)]
    block = [(0, range(k), samples, y_true, preds, proba)]
    dense = next(iter_repeats([write(tmp_path / "dense.parquet", "dense", block,
                                     classes=classes)]))
    compact = next(iter_repeats([write(tmp_path / "compact.parquet", "compact", block,
                                       classes=classes)]))
    assert dense.proba is not None and compact.proba is None and compact.stats is not None
    for j in range(k):
        # the reference: the float64 probabilities in memory, metric by metric
        want = per_run_metrics(y_true, preds[j], proba[j], c)
        for form, matrix in (("dense", dense), ("compact", compact)):
            got = repeat_columns(matrix)["per_run"]
            for metric, value in want.items():
                assert abs(got[metric][j] - value) <= 1e-6, (form, metric, got[metric][j], value)
    tables = {form: repeat_columns(m) for form, m in (("dense", dense), ("compact", compact))}
    for column in ("entropy_mean", "confusion_index_mean"):
        np.testing.assert_allclose(tables["dense"]["per_sample"][column],
                                   tables["compact"]["per_sample"][column], atol=1e-6)


def test_storage_types_and_size(tmp_path):
    rng = np.random.default_rng(0)
    k, n = 10, 2000
    out = {}
    for c in (2, 12, 300):
        y_true, preds, proba = runs_of(rng, k, n, c)
        classes = [str(i) for i in range(c)]
        for form in ("dense", "compact"):
            path = write(tmp_path / f"{form}{c}.parquet", form,
                         [(0, range(k), np.arange(n), y_true, preds, proba)], classes=classes)
            out[form, c] = path.stat().st_size / (k * n)
            schema = {f.name: str(f.type) for f in pq.read_schema(path)}
            assert schema["y_pred"] == ("uint8" if c <= 256 else "uint16")
            floats = {t for name, t in schema.items() if name.startswith("p_other:")
                      or name in ("p_true", "sum_sq", "entropy", "confusion_index")}
            assert floats == {"float"}
            if form == "dense":
                assert sum(name.startswith("p_other:") for name in schema) == c - 1
    # compact rows cost the same whatever C; dense ones grow with it
    assert out["compact", 300] < 1.5 * out["compact", 12] < out["dense", 300] / 10
    assert out["dense", 2] < out["compact", 2]


@pytest.mark.parametrize("c", [30, 355])
def test_the_plan_prices_compact_rows_of_one_hot_probabilities_as_written(tmp_path, c):
    """svm-sgd's hinge loss gives the predicted class's one-hot vector: its compact statistics
    are nearly constant and compress to ~2 bytes a row, not the ~16 of peaked probabilities."""
    from modelvar.planning.plan import bytes_per_row

    rng = np.random.default_rng(c)
    k, n = 10, 5000
    y_true, preds, proba = runs_of(rng, k, n, c)
    sizes = {}
    for one_hot in (False, True):
        p = np.eye(c)[preds] if one_hot else proba
        path = write(tmp_path / f"{one_hot}.parquet", "compact",
                     [(0, range(k), np.arange(n), y_true, preds, p)],
                     classes=[str(i) for i in range(c)])
        sizes[one_hot] = path.stat().st_size / (k * n)
        assert 0.5 < bytes_per_row(c, "compact", one_hot) / sizes[one_hot] < 2
    assert sizes[True] < sizes[False] / 4


def test_run_blocks_of_several_files_read_back_as_one_repeat(tmp_path):
    rng = np.random.default_rng(1)
    k, n, c = 6, 50, 3
    y_true, preds, proba = runs_of(rng, k, n, c)
    samples = np.sort(rng.choice(1000, n, replace=False))
    classes = ["a", "b", "c"]
    whole = write(tmp_path / "whole.parquet", "dense",
                  [(2, range(k), samples, y_true, preds, proba)], classes=classes)
    parts = [write(tmp_path / f"part{a}.parquet", "dense",
                   [(2, range(a, b), samples, y_true, preds[a:b], proba[a:b])], classes=classes)
             for a, b in ((4, 6), (0, 1), (1, 4))]
    one, = iter_repeats([whole])
    joined, = iter_repeats(parts)
    np.testing.assert_array_equal(joined.runs, np.arange(k))
    np.testing.assert_array_equal(joined.preds, one.preds)
    np.testing.assert_array_equal(joined.samples, samples)
    np.testing.assert_allclose(joined.proba, one.proba)
    # and the metrics job writes the same tables from either
    outs = {}
    for name, paths in (("one", [whole]), ("parts", parts)):
        outs[name] = {t: tmp_path / name / f"{t}.parquet" for t in TABLES}
        metrics_job(paths, outs[name], classes=classes)
    for t in TABLES:
        pd.testing.assert_frame_equal(pd.read_parquet(outs["one"][t]),
                                      pd.read_parquet(outs["parts"][t]))


def test_files_are_deterministic_and_read_back_with_labels(tmp_path):
    rng = np.random.default_rng(2)
    y_true, preds, proba = runs_of(rng, 3, 40, 4)
    block = [(r, range(3), np.arange(40), y_true, preds, proba) for r in range(2)]
    a = write(tmp_path / "a.parquet", "dense", block, classes=["w", "x", "y", "z"])
    b = write(tmp_path / "b.parquet", "dense", block, classes=["w", "x", "y", "z"])
    assert a.read_bytes() == b.read_bytes()
    frame = read_predictions(a)
    assert len(frame) == 2 * 3 * 40 and set(frame["y_pred"]) <= {"w", "x", "y", "z"}
    np.testing.assert_allclose(frame[[f"proba:{c}" for c in "wxyz"]].sum(axis=1), 1, atol=1e-6)
    # one row group per (cell, repeat, block of runs): a reader takes one repeat at a time
    assert pq.ParquetFile(a).metadata.num_row_groups == 2


def test_a_failed_write_leaves_nothing(tmp_path):
    writer = PredictionsWriter(tmp_path / "p.parquet", dataset="d", classifier="xgb",
                               classes=["a", "b"], form="dense", n_rows=10)
    writer.write("dnone_cnone_hnone_down100_seedfix", 0, np.arange(2), np.arange(3),
                 np.zeros(3, int), np.zeros((2, 3), int), np.full((2, 3, 2), 0.5))
    writer.abort()
    assert list(tmp_path.iterdir()) == []


def test_metrics_and_cpu_fit_jobs_start_without_pandas(tmp_path):
    """pyarrow would import pandas (≈ 0.15 s of CPU) on its first array conversion: jobs that
    do not need it run without it (issue 13's start-up goal), and still do their work."""
    import json
    import subprocess
    import sys

    from modelvar.data import load, write

    write(load("vehicle", {"source": "embedded"}), tmp_path / "v.parquet", tmp_path / "v.json")
    preds = tmp_path / "p.parquet"
    fit = ["fit", "--data", str(tmp_path / "v.parquet"), "--meta", str(tmp_path / "v.json"),
           "--classifier", "lr-sgd", "--cells", "dnone_cnone_hnone_down100_seedrun",
           "--repeats", "0", "--runs", "3", "--test-fraction", "0.25", "--root-seed", "1",
           "--predictions", str(preds), "--runs-out", str(tmp_path / "r.parquet")]
    pairwise = ["pairwise", "--predictions", str(preds), "--meta", str(tmp_path / "v.json"),
                "--results", str(tmp_path / "res"), "--dataset", "vehicle", "--classifier",
                "lr-sgd", "--job", "j"]
    for argv in (fit, pairwise):
        code = (f"import sys; from modelvar.cli import main; rc = main({json.dumps(argv)}); "
                "print(rc, 'pandas' in sys.modules)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert out.stdout.split()[-2:] == ["0", "False"], out.stderr[-2000:]
    summary = pd.read_parquet(tmp_path / "res/aggregated/summary/dataset=vehicle/"
                              "classifier=lr-sgd/j.parquet")
    assert (summary["metric"] == "ec_global").any()
