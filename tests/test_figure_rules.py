"""The figure set's rules read from each figure's source data (issue 65, items 3, 4, 5, 7 and
8; modelvar.plots.figure_rules), and the figures that show the within-repeat effect: the
factorial cells against the control paired within repeats (reproducibility_by_cell), each run
against its repeat's control (accuracy_by_source)."""

from __future__ import annotations

import matplotlib.image as mpimg
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from modelvar.plots import common
from modelvar.plots.figure_rules import PAGE_INCHES, breaches

DPI = 150


def _marks(**change) -> pd.DataFrame:
    """One clean mark: a point inside its panel, a figure of a column's size."""
    row = {"panel": "accuracy", "category": "control", "kind": "point", "n": 1,
           "x_min": 0.5, "x_max": 0.5, "y_min": 0.0, "y_max": 0.0, "distinct": np.nan,
           "x_low": 0.0, "x_high": 1.0, "y_low": -0.5, "y_high": 0.5, "value_axis": "x",
           "figure_width": 3.3, "figure_height": 4.0}
    return pd.DataFrame([{**row, **change}])


def test_each_rule_names_the_figure_panel_and_mark_that_breaks_it():
    assert breaches(_marks(), width=3.5, name="f") == []
    assert breaches(_marks(x_max=1.2), width=3.5, name="f") == [
        "f: accuracy control point: cut by the axis"]
    thin = breaches(_marks(kind="density", distinct=5), width=3.5, name="f")
    assert thin == ["f: accuracy control: a density from 5 distinct values"]
    assert breaches(_marks(kind="density", distinct=30), width=3.5, name="f") == []
    # a density that does not say how many values it was drawn from is a breach too
    assert "unknown number" in breaches(_marks(kind="density"), width=3.5, name="f")[0]
    flat = _marks(panel="lr-sgd · global EC", x_min=0.1, x_max=0.3)
    assert breaches(flat, width=3.5, name="f") == [
        "f: lr-sgd · global EC: its marks fill 20% of the value axis (at least 60%)"]
    assert breaches(_marks(panel="lr-sgd · global EC", x_min=0.1, x_max=0.8), width=3.5) == []
    assert breaches(_marks(figure_width=3.8), width=3.5, name="f") == [
        "f: 3.80 in wide, wider than 3.50 in"]
    assert breaches(_marks(figure_height=9.0), width=3.5, name="f") == [
        f"f: 9.00 in tall, taller than a page's {PAGE_INCHES} in"]


def test_a_violin_says_how_few_distinct_values_it_was_drawn_from(tmp_path):
    """A density's source data carries the fewest distinct values of its groups, so the
    density rule can be read from the CSV: 40 distinct values per group draw violins that
    say 40; a group of 4 values turns the figure into dots."""
    from modelvar.plots.study import _violin_grid

    rng = np.random.default_rng(3)
    data = pd.DataFrame({"classifier": np.repeat(["lr-sgd", "xgb"], 80),
                         "data": np.tile(np.repeat(["none", "rel 0.2"], 40), 2),
                         "value": rng.normal(0.7, 0.02, 160)})
    fig = _violin_grid(data, x="data", y="value", row=None, col="classifier", xlabel="",
                       ylabel="accuracy", title="t", note="")
    common.save_figure(fig, [tmp_path / "v.png", tmp_path / "v.csv"])
    marks = pd.read_csv(tmp_path / "v.csv")
    densities = marks[marks["kind"] == "density"]
    assert len(densities) and (densities["distinct"] == 40).all()
    assert breaches(marks, width=common.figure_width()) == []
    few = data.assign(value=np.round(data["value"], 2).clip(0.69, 0.72))
    fig = _violin_grid(few, x="data", y="value", row=None, col="classifier", xlabel="",
                       ylabel="accuracy", title="t", note="")
    common.save_figure(fig, [tmp_path / "d.png", tmp_path / "d.csv"])
    marks = pd.read_csv(tmp_path / "d.csv")
    assert "density" not in set(marks["kind"]) and (marks["distinct"].dropna() <= 4).all()


def _factorial(repeats: int = 12, seed: int = 5):
    """A summary table of a 2 × 2 × 2 factorial grid (data, hparam, training fraction) in
    which each repeat's test set moves every cell's accuracy by a shared offset (SD 0.03)
    and the training fraction lowers it by 0.01 within every repeat."""
    from modelvar.study.cells import Cell

    rng = np.random.default_rng(seed)
    rows, roles = [], {}
    for data in ("dnone", "rel0p2"):
        for hp in ("hnone", "hrel0p1"):
            for down in ("down100", "down050"):
                cell = f"{data}_cnone_{hp}_{down}_seedfix"
                Cell.parse(cell)
                roles.setdefault("lr-sgd", {})[cell] = ("factorial",)
    offsets = rng.normal(0, 0.03, repeats)
    for cell in roles["lr-sgd"]:
        for r in range(repeats):
            effect = -0.01 if "down050" in cell else 0.0
            for metric, base in (("accuracy", 0.8), ("pa", 0.95)):
                rows.append({"classifier": "lr-sgd", "cell": cell, "repeat": r,
                             "subset": "all", "metric": metric,
                             "mean": base + offsets[r] + effect + rng.normal(0, 0.002),
                             "range": abs(rng.normal(0.02, 0.005)),
                             **dict(zip(("data", "categorical", "hparam", "downsample",
                                         "model_seed"), cell.split("_"), strict=True))})
    return pd.DataFrame(rows), roles


def test_every_cell_is_read_against_the_control_paired_within_repeats(tmp_path, width):
    """Item 4: the repeats' test sets move every cell together (SD 0.03, three times the
    training fraction's 0.01 effect): unpaired intervals of cell means would all overlap;
    paired within repeats, the training fraction's effect is found in every cell where it
    acts and no other cell moves. The control is the first row, at 0."""
    from modelvar.plots.study import reproducibility_by_cell

    width("single")
    summary, roles = _factorial()
    out = tmp_path / "cells.png"
    points = reproducibility_by_cell(summary, roles, "d", [out, tmp_path / "cells.csv"],
                                     metrics=("accuracy", "pa"))
    accuracy = points[points["metric"] == "accuracy"].set_index("cell")
    halved = accuracy.index.str.contains("down050")
    assert (accuracy.loc[halved, "high"] < 0).all()
    assert (accuracy.loc[~halved].drop("dnone_cnone_hnone_down100_seedfix")
            .pipe(lambda f: (f["low"] < 0) & (f["high"] > 0))).all()
    assert np.allclose(accuracy.loc[halved, "mean"], -0.01, atol=0.003)
    control = accuracy.loc["dnone_cnone_hnone_down100_seedfix"]
    assert control["mean"] == 0 and np.isnan(control["low"])
    # unpaired, the cell means' intervals over repeats are ± ~0.02: the effect hides in them
    means = summary[summary["metric"] == "accuracy"].groupby("cell")["mean"]
    assert (means.std() * 2.2 / np.sqrt(12) > 0.015).all()
    marks = pd.read_csv(tmp_path / "cells.csv")
    assert breaches(marks, width=common.figure_width()) == []
    height, wide = (n / DPI for n in mpimg.imread(out).shape[:2])
    assert wide <= 3.5 + 0.05 and height <= PAGE_INCHES


def test_a_grid_of_32_cells_and_four_metrics_fits_a_page_at_single_width(tmp_path, width):
    """Item 7: one row per cell as a design matrix, a panel per metric side by side: the
    default study's 32 cells (it was 32.6 in tall at single width) fit a page."""
    from modelvar.plots.study import reproducibility_by_cell

    width("single")
    summary, roles = _factorial(repeats=6)
    grid = []
    for seed in ("seedfix", "seedrun"):
        for cat in ("cnone", "label0p1"):
            grid.append(summary.assign(
                cell=summary["cell"].str.replace("_seedfix", f"_{seed}").str.replace(
                    "_cnone_", f"_{cat}_"), model_seed=seed, categorical=cat))
    summary = pd.concat(grid, ignore_index=True)
    summary = pd.concat([summary, summary.assign(metric="ec_global"),
                         summary.assign(metric="ec_local")], ignore_index=True)
    cells = summary["cell"].unique()
    assert len(cells) == 32
    roles = {"lr-sgd": {c: ("factorial",) for c in cells}}
    out = tmp_path / "big.png"
    reproducibility_by_cell(summary, roles, "d", [out, tmp_path / "big.csv"])
    height, wide = (n / DPI for n in mpimg.imread(out).shape[:2])
    assert wide <= 3.5 + 0.05 and height <= PAGE_INCHES
    assert breaches(pd.read_csv(tmp_path / "big.csv"), width=3.5) == []


def test_each_run_is_read_against_its_repeats_control(tmp_path):
    """Item 4: the within-repeat view takes out each repeat's test-set offset: a source that
    lowers accuracy by 0.02 in every repeat is a tight strip around −0.02 even where the
    repeats' accuracies spread by 0.05."""
    from modelvar.plots.study import within_repeat

    rng = np.random.default_rng(8)
    rows = []
    for r in range(10):
        offset = rng.normal(0, 0.05)
        for cell, effect in (("control", 0.0), ("data", -0.02)):
            for run in range(5):
                rows.append({"classifier": "a", "repeat": r, "cell": cell, "run": run,
                             "accuracy": 0.8 + offset + effect + rng.normal(0, 0.002)})
    runs = pd.DataFrame(rows)
    within = within_repeat(runs, "control")
    data = within[runs["cell"] == "data"]
    assert abs(data.mean() + 0.02) < 0.002 and data.std() < 0.005
    assert runs.loc[runs["cell"] == "data", "accuracy"].std() > 0.02
    # a repeat without a control run has no within-repeat value (never a guessed one)
    missing = runs[~((runs["repeat"] == 3) & (runs["cell"] == "control"))]
    assert within_repeat(missing, "control")[missing["repeat"] == 3].isna().all()
    plt.close("all")


STRIP_FIGURE = """
import sys
import numpy as np, pandas as pd
from modelvar.plots import common
from modelvar.plots.study import _violin_grid

rng = np.random.default_rng(3)
n = 24
data = pd.DataFrame({"classifier": np.tile(np.repeat(["lr-sgd", "xgb"], n), 4),
                     "fraction": np.tile(np.repeat(["50 %", "100 %"], 2 * n), 2),
                     "data": np.repeat(["none", "rel 0.2"], 4 * n),
                     "hparam": np.tile(np.repeat(["none", "rel 0.1"], n), 4),
                     "value": np.round(rng.normal(0.9, 0.02, 8 * n), 2)})
fig = _violin_grid(data, x="fraction", y="value", row="data", col="hparam", xlabel="",
                   ylabel="accuracy", title="t", note="")
common.save_figure(fig, [sys.argv[1] + ".png", sys.argv[1] + ".pdf", sys.argv[1] + ".csv"])
"""


def test_a_figure_of_dots_is_the_same_bits_in_every_process(tmp_path):
    """A strip figure (few distinct values: dots, jittered) with row and column facets, drawn
    in two processes with other string hashing: the same PNG, PDF and CSV bytes, and its dots
    spread across their category. (seaborn jitters from numpy's global generator, unseeded,
    walking the facets in a set's order: each drawing differed.)"""
    import os
    import subprocess
    import sys

    for seed in ("1", "2"):
        subprocess.run([sys.executable, "-c", STRIP_FIGURE, str(tmp_path / f"h{seed}")],
                       check=True, timeout=300,
                       env={**os.environ, "PYTHONHASHSEED": seed, "MPLBACKEND": "Agg"})
    for suffix in (".png", ".pdf", ".csv"):
        assert (tmp_path / f"h1{suffix}").read_bytes() == (tmp_path / f"h2{suffix}").read_bytes()
    dots = pd.read_csv(tmp_path / "h1.csv").query("kind == 'dots'")
    assert len(dots) == 8 and (dots["x_max"] - dots["x_min"] > 0.05).all()


def test_a_figure_reads_its_tables_in_the_study_order_whatever_the_jobs(tmp_path):
    """The same runs written as the plan may group them — one job of five repeats, or batches
    of repeats 3–4 then 0–2 (another run's plan: other files, listed in another order), a
    repeat's runs split in two run blocks — read as the figure job reads them: the same table,
    row for row, so the same figure. Read as written, the rows' order differed, and with it
    which dot took which jitter (two runs of the default study drew other bytes)."""
    from modelvar.pipeline.result_tables import in_study_order, read_tables

    rng = np.random.default_rng(4)
    runs = pd.DataFrame([{"cell": cell, "repeat": r, "run": k,
                          "accuracy": float(np.round(rng.normal(0.9, 0.02), 3))}
                         for cell in ("dnone_down100", "rel0p2_down100") for r in range(5)
                         for k in range(4)])
    folder = tmp_path / "dataset=vehicle" / "classifier=xgb"
    folder.mkdir(parents=True)

    def written(name, rows):
        path = folder / f"{name}.parquet"
        rows.to_parquet(path, index=False)
        return path

    one_job = [written("all", runs)]
    batches = [written("late", runs[runs["repeat"] >= 3]),
               written("early", runs[runs["repeat"] < 3])]
    blocks = [written("runs-2-3", runs[runs["run"] >= 2]),
              written("runs-0-1", runs[runs["run"] < 2])]
    want = in_study_order(read_tables(one_job))
    for paths in (batches, blocks):
        assert not read_tables(paths).equals(read_tables(one_job))  # the case is not trivial
        pd.testing.assert_frame_equal(in_study_order(read_tables(paths)), want)
