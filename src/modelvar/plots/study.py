"""The figure set of one dataset (seaborn), in the report's reading order.

Every figure says what it shows and what each mark pools: its title names the panels' families,
and where a violin or a point pools several levels of a family that varies in the grid, a line
under the title lists them with the number of values per mark. Cells carry readable labels
(``data rel 0.2 · hparam none · 50 % train · seed per run``, :func:`modelvar.study.cells.
cell_label`), metrics their names, classifiers one fixed colour each. Figures are at most
9.3 inches (1,400 px at 150 dpi) wide, and no panel holds more than :data:`MAX_PER_PANEL`
violins or rows.

Each figure takes the dataset's tables and ``roles`` (cell → its parts of the design,
:func:`modelvar.study.design.cell_roles`): the seed's figures (gross accuracy grid, accuracy
by data perturbation, repeat accuracy ranges, EC distributions, per-sample instability) show the
**factorial** cells, where every family's levels are crossed; the sources figures show the
**one-at-a-time** cells (the control and each source alone).
"""

from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.ticker import MaxNLocator

from modelvar.plots.common import classifier_colours, metric_name, save_figure
from modelvar.study import families
from modelvar.study.cells import cell_label, level_value

MAX_WIDTH_IN = 9.3
MAX_PER_PANEL = 20


# ----------------------------------------------------------------------------- helpers
def cells_of(frame: pd.DataFrame, roles: dict[str, tuple], role: str) -> pd.DataFrame:
    """The rows of the cells in one part of the design (``factorial``, ``one-at-a-time``)."""
    keep = {c for c, r in roles.items() if role in r}
    return frame[frame["cell"].astype(str).isin(keep)]


def _facet_title(column: str) -> str:
    """A facet's title: a family's title, any other column's name."""
    return families.family(column).title if column in families.names() else column


def varying(frame: pd.DataFrame) -> list[str]:
    """Families with more than one level in these rows."""
    return [f for f in families.names() if f in frame and frame[f].nunique() > 1]


def _labelled(frame: pd.DataFrame) -> pd.DataFrame:
    """Level ids → readable levels (``rel 0.2``, ``50 %``, ``per run`` …) in the family
    columns (the family is in the panel title or axis label)."""
    out = frame.copy()
    for family in families.names():
        if family in out:
            out[family] = [level_value(str(v)) for v in out[family]]
    return out


def source_order(cells) -> list[tuple[str, str]]:
    """(cell, label) of one-at-a-time cells: the control first, then the families in their
    order (data, categorical, hparam, training fraction, model seed)."""
    from modelvar.findings.sources import source_names, source_of

    named = {str(c): source_of(str(c)) for c in cells}
    order = source_names()
    return sorted(((c, label) for c, (_, label) in named.items()),
                  key=lambda t: (order.index(named[t[0]][0]), t[1]))


def _level_key(value: str):
    """'none'/'fixed' first, then by scheme, then numerically (50 % before 100 %)."""
    match = re.search(r"\d*\.?\d+", str(value))
    number = float(match.group()) if match else 0.0
    prefix = str(value)[: match.start()] if match else str(value)
    return (value not in ("none", "seed fixed", "fixed"), prefix, number, str(value))


def _order(frame: pd.DataFrame, column: str) -> list[str]:
    return sorted(frame[column].unique(), key=_level_key)


def pooling_note(frame: pd.DataFrame, shown: list[str], per_mark: str) -> str:
    """'each violin pools categorical (none, label 0.1) × training fraction (50 %, 100 %);
    N values each' for the families that vary but are not shown by position or facet."""
    pooled = [f for f in varying(frame) if f not in shown]
    labelled = _labelled(frame)
    if not pooled:
        return f"one cell per mark; {per_mark}"
    parts = [f"{families.family(f).title} ({', '.join(_order(labelled, f))})" for f in pooled]
    return f"each mark pools {' × '.join(parts)}; {per_mark}"


def _title(fig, title: str, note: str = "") -> None:
    width = int(fig.get_figwidth() * 12)
    text = textwrap.fill(title, width)
    if note:
        text += "\n" + textwrap.fill(note, int(width * 1.1))
    fig.suptitle(text, fontsize=9.5, y=1.0, va="bottom")


def _palette(classifiers) -> dict[str, str]:
    return classifier_colours(classifiers)


def _violin_grid(data: pd.DataFrame, *, x: str, y: str, row: str | None, col: str | None,
                 xlabel: str, ylabel: str, title: str, note: str, horizontal: bool = False,
                 order: list[str] | None = None):
    """Violins of y by x (one colour per classifier), faceted by row/col; panel sizes chosen so
    that the figure fits the report's width."""
    rows = _order(data, row) if row else [None]
    cols = _order(data, col) if col else [None]
    cat = y if horizontal else x
    if order is None:
        order = _order(data, cat) if cat != "classifier" else sorted(data["classifier"].unique())
    n_cols = len(cols)
    panel_w = min(3.2, max(1.4, (MAX_WIDTH_IN - 0.8) / n_cols))
    panel_h = 0.32 * len(order) + 0.9 if horizontal else 2.4
    kw = {"row": row, "row_order": rows} if row else {}
    if col:
        kw.update(col=col, col_order=cols)
    hue_order = sorted(data["classifier"].unique())
    grid = sns.catplot(data=data, kind="violin", x=x, y=y, hue="classifier", order=order,
                       hue_order=hue_order, palette=_palette(hue_order), cut=0, inner="quart",
                       density_norm="width", linewidth=0.5, height=panel_h,
                       aspect=panel_w / panel_h, margin_titles=True, legend_out=True,
                       sharex=not horizontal, sharey=True, **kw)
    grid.set_axis_labels(xlabel, ylabel)
    grid.set_titles(row_template=f"{_facet_title(row)}: {{row_name}}" if row else "",
                    col_template=f"{_facet_title(col)}: {{col_name}}" if col else "")
    for ax in grid.axes.flat:
        ax.grid(axis="x" if horizontal else "y", alpha=0.3)
        ax.tick_params(labelsize=7.5)
        ax.title.set_fontsize(8)
        if not horizontal:
            ax.tick_params(axis="x", labelrotation=30)
    for ax in grid.axes.flat:  # the margin titles of the rows
        for text in ax.texts:
            text.set_fontsize(8)
    _title(grid.figure, title, note)
    return grid.figure


def _cell_key(cell_id: str, families) -> tuple:
    """Sort key of a cell by its levels of the given families (none first, then numerically)."""
    from modelvar.study.cells import Cell

    levels = Cell.parse(cell_id).levels()
    return tuple(_level_key(level_value(levels[f])) for f in families)


def _panel_families(frame: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Split the varying families into facets and row labels so that no panel has more than
    :data:`MAX_PER_PANEL` rows: families move to the facets in the registry's order (the
    training-rows families first, :mod:`modelvar.study.families`)."""
    fams = varying(frame)
    facets = []
    for family in fams:
        rest = [f for f in fams if f not in facets]
        if math.prod(frame[f].nunique() for f in rest) <= MAX_PER_PANEL:
            break
        facets.append(family)
    return facets, [f for f in fams if f not in facets]


# ----------------------------------------------------------------------------- sources (OAT)
def sources_of_variance(summary: pd.DataFrame, agreement: pd.DataFrame, runs: pd.DataFrame,
                        roles: dict[str, tuple], dataset: str, out_paths: list[Path]) -> None:
    """Each source alone against the control: within-repeat accuracy SD and disagreement, means
    over repeats with 95 % intervals (:mod:`modelvar.findings.sources`)."""
    from modelvar.findings.sources import sources_of_variance as table
    from modelvar.findings.sources import study_sources
    from modelvar.plots.findings import sources_figure

    sources = table(summary, agreement, runs, {dataset: roles})
    if sources.empty:
        raise ValueError(f"{dataset}: no one-at-a-time cells to draw")
    sources_figure(sources, study_sources(sources), out_paths, title=(
        f"{dataset}: each source of variance alone against the control (means over "
        f"{int(sources['repeats'].max())} repeats, 95 % CI; test set: SD of the control's "
        "accuracy between repeats)"))


def accuracy_by_source(runs: pd.DataFrame, roles: dict[str, tuple], dataset: str,
                       out_paths: list[Path]) -> None:
    """Run accuracies of the control and of each source alone, one panel per classifier."""
    data = cells_of(runs, roles, "one-at-a-time").copy()
    if data.empty:
        raise ValueError(f"{dataset}: no one-at-a-time cells to draw")
    ordered = source_order(data["cell"].unique())
    labels = dict(ordered)
    data["source"] = [labels[str(c)] for c in data["cell"]]
    order = [label for _, label in ordered]
    per = data.groupby(["classifier", "source"]).size()
    repeats = data["repeat"].nunique()
    fig = _violin_grid(
        data, x="accuracy", y="source", order=order,
        row=None, col="classifier", xlabel="run accuracy", ylabel="", horizontal=True,
        title=f"{dataset}: run accuracy under each source alone and the control",
        note=f"each violin: every run of one cell, {repeats} repeats × "
             f"{int(per.max() / repeats)} runs = {int(per.max())} runs (test sets differ "
             "between repeats)")
    save_figure(fig, out_paths)


def reproducibility_vs_chance(summary: pd.DataFrame, roles: dict[str, tuple], dataset: str,
                              out_paths: list[Path]) -> None:
    """Per source alone: global EC (mean over repeats with 95 % CI) and the value expected if
    the runs erred independently (the null), so that the excess over chance shows."""
    from modelvar.findings.sources import mean_ci, source_of

    data = cells_of(summary, roles, "one-at-a-time")
    data = data[(data["subset"] == "all") & (data["metric"] == "ec_global")]
    if data.empty:
        raise ValueError(f"{dataset}: no one-at-a-time cells to draw")
    rows = []
    for (clf, cell), part in data.groupby(["classifier", "cell"], observed=True):
        mean, low, high = mean_ci(part["mean"], (0, 1))
        rows.append({"classifier": clf, "source": source_of(str(cell))[1], "mean": mean,
                     "low": low, "high": high, "null": part["null_mean"].mean()})
    points = pd.DataFrame(rows)
    classifiers = sorted(points["classifier"].unique())
    levels = [label for _, label in source_order(data["cell"].unique())]
    fig, axes = plt.subplots(1, len(classifiers), squeeze=False, sharey=True,
                             figsize=(min(MAX_WIDTH_IN, 2.2 + 3.2 * len(classifiers)),
                                      # title and legend take ~1.5 in whatever the rows: with
                                      # 0.9 in, three rows' labels ran into each other
                                      1.8 + 0.32 * len(levels)))
    for ax, clf in zip(axes[0], classifiers, strict=True):
        part = points[points["classifier"] == clf].set_index("source").reindex(levels)
        y = np.arange(len(levels))
        ax.errorbar(part["mean"], y, xerr=[(part["mean"] - part["low"]).clip(lower=0),
                                           (part["high"] - part["mean"]).clip(lower=0)],
                    fmt="o", color=_palette(classifiers)[clf], ecolor="black",
                    capsize=2, label="global EC, mean over repeats (95 % CI)")
        ax.scatter(part["null"], y, marker="D", facecolor="none", edgecolor="#555555",
                   label="expected if runs erred independently")
        ax.set_yticks(y, levels, fontsize=8)
        ax.set_ylim(len(levels) - 0.5, -0.5)
        ax.set_title(clf, fontsize=9, color=_palette(classifiers)[clf])
        ax.set_xlabel("global EC (rate both runs wrong)", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, -0.02))
    _title(fig, f"{dataset}: global error consistency of each source alone, against chance "
                "(the gap is the excess over independent errors; full test sets)")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    save_figure(fig, out_paths)


# ----------------------------------------------------------------------------- the seed's figures
def gross_accuracy_grid(runs: pd.DataFrame, roles: dict[str, tuple], dataset: str,
                        out_paths: list[Path]) -> None:
    """Every run's accuracy (seed 004): rows data, columns hparam perturbation, x classifier."""
    data = _labelled(cells_of(runs, roles, "factorial"))
    grid = cells_of(runs, roles, "factorial")
    n = data.groupby(["classifier", "data", "hparam"], observed=True).size().max()
    fig = _violin_grid(data, x="classifier", y="accuracy",
                       row="data" if data["data"].nunique() > 1 else None,
                       col="hparam" if data["hparam"].nunique() > 1 else None,
                       xlabel="", ylabel="run accuracy",
                       title=f"{dataset}: gross accuracies, every run of every repeat (rows: "
                             "data perturbation, columns: hparam perturbation)",
                       note=pooling_note(grid, ["data", "hparam"], f"{n} runs per violin"))
    save_figure(fig, out_paths)


def _violins_by_data(data: pd.DataFrame, grid: pd.DataFrame, *, y: str, facet: str,
                     facet_label: str, ylabel: str, title: str, unit: str):
    """Violins of ``y`` by data perturbation level, one row per classifier and one column per
    level of ``facet`` (when it varies); the note says what else each violin pools."""
    col = facet if data[facet].nunique() > 1 else None
    n = data.groupby(["classifier", "data"] + ([col] if col else []), observed=True).size().max()
    return _violin_grid(data, x="data", y=y, row="classifier", col=col,
                        xlabel="data perturbation", ylabel=ylabel,
                        title=f"{title} (rows: classifier"
                              + (f", columns: {facet_label})" if col else ")"),
                        note=pooling_note(grid, ["data", facet], f"{n} {unit} per violin"))


def accuracy_by_data_perturbation(runs: pd.DataFrame, roles: dict[str, tuple], dataset: str,
                                  out_paths: list[Path]) -> None:
    """Run accuracies by data perturbation level (seed 004, "ignoring hparam perturbation"),
    one row per classifier, columns training fraction."""
    grid = cells_of(runs, roles, "factorial")
    fig = _violins_by_data(_labelled(grid), grid, y="accuracy", facet="downsample",
                           facet_label="training fraction", ylabel="run accuracy",
                           title=f"{dataset}: accuracy by data perturbation", unit="runs")
    save_figure(fig, out_paths)


def repeat_accuracy_ranges(summary: pd.DataFrame, roles: dict[str, tuple], dataset: str,
                           out_paths: list[Path]) -> None:
    """Per repeat: max − min of its runs' accuracies, shown over repeats (seed 004)."""
    grid = cells_of(summary, roles, "factorial")
    grid = grid[(grid["metric"] == "accuracy") & (grid["subset"] == "all")]
    fig = _violins_by_data(_labelled(grid), grid, y="range", facet="hparam",
                           facet_label="hparam perturbation", ylabel="accuracy range in a repeat",
                           title=f"{dataset}: range of run accuracies within each repeat",
                           unit="repeat ranges")
    save_figure(fig, out_paths)


def ec_distributions(summary: pd.DataFrame, roles: dict[str, tuple], dataset: str,
                     out_paths: list[Path]) -> None:
    """Per-repeat mean global and local EC (and accuracy-normalised forms), over repeats."""
    grid = cells_of(summary, roles, "factorial")
    grid = grid[(grid["subset"] == "all") & grid["metric"].isin(
        ["ec_global", "ec_local", "ec_global_accnorm_sqrt", "ec_local_accnorm_sqrt"])]
    data = _labelled(grid)
    short = {"ec_global": "1 global EC", "ec_global_accnorm_sqrt": "2 global EC, acc.-norm.",
             "ec_local": "3 local EC", "ec_local_accnorm_sqrt": "4 local EC, acc.-norm."}
    data["metric"] = data["metric"].map(short)
    n = data.groupby(["classifier", "data", "metric"], observed=True).size().max()
    fig = _violin_grid(data, x="data", y="mean", row="classifier", col="metric",
                       xlabel="data perturbation", ylabel="repeat mean",
                       title=f"{dataset}: error consistency, the mean over each repeat's run "
                             "pairs, shown over repeats (rows: classifier, columns: metric; "
                             "acc.-norm. = accuracy-normalised, √)",
                       note=pooling_note(grid, ["data"], f"{n} repeat means per violin"))
    for ax in np.ravel(fig.axes):
        ax.set_title(re.sub(r"metric: \d ", "", ax.get_title()), fontsize=8)
    save_figure(fig, out_paths)


def per_sample_instability(agreement: pd.DataFrame, roles: dict[str, tuple], dataset: str,
                           out_paths: list[Path]) -> None:
    """Per repeat: the share of test samples some run predicts differently, over repeats."""
    grid = cells_of(agreement, roles, "factorial")
    fig = _violins_by_data(_labelled(grid), grid, y="unstable_frac", facet="downsample",
                           facet_label="training fraction", ylabel="unstable share",
                           title=f"{dataset}: share of test samples not predicted alike by all "
                                 "runs of a repeat", unit="repeats")
    save_figure(fig, out_paths)


def reproducibility_by_cell(summary: pd.DataFrame, roles: dict[str, tuple], dataset: str,
                            out_paths: list[Path], stat: str = "mean",
                            metrics=("accuracy", "ec_global", "ec_local", "pa")) -> None:
    """One row per factorial cell: the repeats' ``stat`` (mean over runs or run pairs, or
    ``range``) of each metric, as the mean over repeats with a 95 % t-interval, one point per
    classifier; two metrics side by side. With more than one family varying, the cells are
    grouped by their data level (then hparam level … while a group would exceed
    :data:`MAX_PER_PANEL` rows)."""
    from modelvar.findings.sources import mean_ci

    grid = cells_of(summary, roles, "factorial")
    grid = grid[(grid["subset"] == "all") & grid["metric"].isin(metrics)]
    fams = varying(grid)
    facets, labelled = _panel_families(grid)
    if not facets and len(fams) > 1:
        facets, labelled = fams[:1], fams[1:]
    rows = []
    for (clf, cell, metric), part in grid.groupby(["classifier", "cell", "metric"],
                                                  observed=True):
        mean, low, high = mean_ci(part[stat], (0, 1) if metric != "kappa" else (-1, 1))
        rows.append({"classifier": clf, "metric": metric, "mean": mean, "low": low,
                     "high": high, "facet": cell_label(str(cell), facets) if facets else "",
                     "row": cell_label(str(cell), labelled) if labelled else "all cells",
                     "key": _cell_key(str(cell), labelled),
                     "facet_key": _cell_key(str(cell), facets)})
    points = pd.DataFrame(rows)
    key_of = dict(zip(points["row"], points["key"], strict=True))
    panel_key = dict(zip(points["facet"], points["facet_key"], strict=True))
    panels = sorted(points["facet"].unique(), key=panel_key.get)
    classifiers = sorted(points["classifier"].unique())
    metric_list = [m for m in metrics if m in set(points["metric"])]
    pairs = [metric_list[i:i + 2] for i in range(0, len(metric_list), 2)]
    n_rows = points.groupby("facet")["row"].nunique().max()
    blocks = [(panel, pair) for panel in panels for pair in pairs]
    fig, axes = plt.subplots(len(blocks), 2, squeeze=False,
                             figsize=(MAX_WIDTH_IN, len(blocks) * (0.24 * n_rows + 0.9) + 0.7))
    offsets = np.linspace(-0.25, 0.25, len(classifiers)) if len(classifiers) > 1 else [0.0]
    for r, (panel, pair) in enumerate(blocks):
        part = points[points["facet"] == panel]
        order = sorted(part["row"].unique(), key=key_of.get)
        for c in range(2):
            ax = axes[r][c]
            if c >= len(pair):
                ax.axis("off")
                continue
            metric = pair[c]
            for off, clf in zip(offsets, classifiers, strict=True):
                p = part[(part["metric"] == metric) & (part["classifier"] == clf)].set_index(
                    "row").reindex(order)
                y = np.arange(len(order)) + off
                ax.errorbar(p["mean"], y, xerr=[(p["mean"] - p["low"]).clip(lower=0),
                                                (p["high"] - p["mean"]).clip(lower=0)],
                            fmt="o", markersize=3.5, capsize=1.5, elinewidth=0.8,
                            color=_palette(classifiers)[clf], label=clf)
            ax.set_yticks(range(len(order)), order if c == 0 else [], fontsize=7)
            ax.set_ylim(len(order) - 0.5, -0.5)
            ax.grid(axis="x", alpha=0.3)
            ax.tick_params(axis="x", labelsize=7)
            ax.xaxis.set_major_locator(MaxNLocator(6))
            name = metric_name(metric)
            ax.set_title((name if stat == "mean" else f"range of {name}")
                         + (f" — {panel}" if panel else ""), fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(classifiers), fontsize=8,
               frameon=False, bbox_to_anchor=(0.5, -0.01))
    what = "mean over each repeat's runs or run pairs" if stat == "mean" else \
        "range (max − min) over each repeat's run pairs"
    _title(fig, f"{dataset}: every cell of the factorial grid, the {what}, as the mean over "
                f"{grid['repeat'].nunique()} repeats with a 95 % interval")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    save_figure(fig, out_paths)


def repeat_ec_ranges(summary: pd.DataFrame, roles: dict[str, tuple], dataset: str,
                     out_paths: list[Path]) -> None:
    """Per repeat: the range of the pairwise global and local EC among its run pairs (seed
    004's "Repeat EC Ranges"), as the mean over repeats with a 95 % interval per cell."""
    reproducibility_by_cell(summary, roles, dataset, out_paths, stat="range",
                            metrics=("ec_global", "ec_local"))


def group_disparities(disparities: pd.DataFrame, roles: dict[str, tuple], dataset: str,
                      out_paths: list[Path]) -> None:
    """Largest difference between groups (max − min) of per-run accuracy and per-repeat
    reproducibility, for the control and each source alone: mean over runs or repeats with a
    95 % interval; one panel per grouping and metric."""
    from modelvar.findings.sources import mean_ci, source_of

    data = disparities[disparities["aggregate"] == "difference_minmax"]
    data = data[(data["run"] >= 0) & (data["metric"] == "accuracy")
                | (data["run"] < 0) & (data["metric"] != "mean_accuracy")]
    oat = cells_of(data, roles, "one-at-a-time")
    data = oat if not oat.empty else data
    rows = []
    for (grouping, metric, clf, cell), part in data.groupby(
            ["grouping", "metric", "classifier", "cell"], observed=True):
        label = source_of(str(cell))[1] if not oat.empty else cell_label(str(cell),
                                                                          varying(data))
        mean, low, high = mean_ci(part["value"], (0, 2))
        rows.append({"grouping": grouping, "classifier": clf, "label": label, "mean": mean,
                     "low": low, "high": high,
                     "metric": "accuracy, per run" if metric == "accuracy" else
                     f"{metric_name(metric)}, per repeat"})
    points = pd.DataFrame(rows)
    if points.empty:
        raise ValueError(f"{dataset}: no group disparities to draw")
    groupings = list(dict.fromkeys(points["grouping"]))
    metrics = list(dict.fromkeys(points["metric"]))
    order = ([label for _, label in source_order(data["cell"].unique())] if not oat.empty
             else sorted(points["label"].unique()))[:MAX_PER_PANEL]
    classifiers = sorted(points["classifier"].unique())
    offsets = np.linspace(-0.2, 0.2, len(classifiers)) if len(classifiers) > 1 else [0.0]
    fig, axes = plt.subplots(len(groupings), len(metrics), squeeze=False, sharey=True,
                             figsize=(MAX_WIDTH_IN, len(groupings) * (0.3 * len(order) + 1.0)))
    for r, grouping in enumerate(groupings):
        for c, metric in enumerate(metrics):
            ax = axes[r][c]
            for off, clf in zip(offsets, classifiers, strict=True):
                p = points[(points["grouping"] == grouping) & (points["metric"] == metric)
                           & (points["classifier"] == clf)].set_index("label").reindex(order)
                ax.errorbar(p["mean"], np.arange(len(order)) + off,
                            xerr=[(p["mean"] - p["low"]).clip(lower=0),
                                  (p["high"] - p["mean"]).clip(lower=0)],
                            fmt="o", markersize=3.5, capsize=1.5, elinewidth=0.8,
                            color=_palette(classifiers)[clf], label=clf)
            ax.set_yticks(range(len(order)), order, fontsize=7)
            ax.set_ylim(len(order) - 0.5, -0.5)
            ax.grid(axis="x", alpha=0.3)
            ax.tick_params(axis="x", labelsize=7)
            ax.xaxis.set_major_locator(MaxNLocator(5))
            if r == 0:
                ax.set_title(metric, fontsize=8)
            if c == 0:
                ax.set_ylabel(f"grouped by {grouping}", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(classifiers), fontsize=8,
               frameon=False, bbox_to_anchor=(0.5, -0.01))
    _title(fig, f"{dataset}: largest difference between groups (max − min), mean over runs "
                "or repeats with a 95 % interval" + (", for the control and each source alone"
                                                     if not oat.empty else ""))
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save_figure(fig, out_paths)
