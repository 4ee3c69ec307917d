"""Figures of the simulation studies (seeds 000 and 002), seaborn, at the figure set's width
(:func:`modelvar.plots.common.figure_width`). Point clouds larger than :data:`MAX_POINTS` a
panel are thinned to a fixed random sample of that many (the panel says so)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.ticker import MaxNLocator

from modelvar.plots.common import columns_that_fit, figure_width, metric_name, save_figure

#: the most points a scatter panel draws (a fixed random sample beyond)
MAX_POINTS = 300


def thinned(frame: pd.DataFrame, by: str, at_most: int = MAX_POINTS) -> tuple[pd.DataFrame, int]:
    """At most ``at_most`` rows per ``by`` group (a sample from a fixed seed) and the largest
    group's size before thinning."""
    import numpy as np

    largest = int(frame.groupby(by, observed=True).size().max()) if len(frame) else 0
    if largest <= at_most:
        return frame, largest
    rng = np.random.default_rng(0)
    keep = [rows if len(rows) <= at_most else rng.choice(rows, at_most, replace=False)
            for rows in frame.groupby(by, observed=True).indices.values()]
    return frame.iloc[np.sort(np.concatenate(keep))], largest


#: the most the panels of a simulation figure may take, inches tall (a page, less its title,
#: legend and axis labels)
PANELS_INCHES = 7.0
#: what a row of panels needs beside its plotting area: a title of up to three lines and the
#: tick labels, inches
DECOR_INCHES = 0.6


def _panels(n: int, aspect: float = 1.0) -> tuple[int, float]:
    """(panels a row, panel height in inches) for ``n`` panels ``aspect`` times as wide as
    tall at the figure width: as many a row as fit at 1.6 in, more (smaller) where their rows
    would be taller than :data:`PANELS_INCHES`."""
    wrap = columns_that_fit(1.6, n, margin=0.4)

    def height(columns: int) -> float:
        return (figure_width() - 0.4) / columns * 0.95 / aspect

    while wrap < n and -(-n // wrap) * (height(wrap) + DECOR_INCHES) > PANELS_INCHES:
        wrap += 1
    return wrap, height(wrap)


#: shades of grey for a simulation factor's levels (light to dark): a colour means a classifier
#: in every figure of the set, and the simulations have none
GREYS = ("#b0b0b0", "#6e6e6e", "#1a1a1a")


def greys(levels) -> dict:
    """Each level (in order) its shade of grey, light to dark."""
    import numpy as np

    levels = list(levels)
    ramp = np.linspace(0.72, 0.1, len(levels)) if len(levels) > 1 else [0.1]
    return {level: str(round(float(v), 3)) for level, v in zip(levels, ramp, strict=True)}


def _process(sims: pd.DataFrame) -> pd.DataFrame:
    """The simulated process: its error set (fixed, variable) and whether the runs' errors
    depend on each other."""
    return pd.DataFrame({"error set": sims["error_set"] + " error set",
                         "runs": sims["dependent"].map({True: "dependent",
                                                        False: "independent"})},
                        index=sims.index)


def _tidy(grid, xlabel: str, ylabel: str, title: str, panel: float, note: str = "", *,
          numeric_x: bool = True) -> None:
    """Panel titles wrapped to their panel's width, the axis labels once for the figure, the
    legend under the panels (one column in a narrow figure), the title and a note above: the
    figure stays within the set's width, nothing drawn over anything else; ``panel``: a
    panel's height, inches (:func:`_panels`); ``numeric_x``: whether the x axis is numeric
    (its ticks thinned in a narrow panel; category names are turned upright instead)."""
    import math
    import textwrap

    fig = grid.figure
    wide = figure_width() > 5.0
    chars = max(12, int(figure_width() / grid._ncol * 13))
    grid.set_titles("{col_name}")
    grid.set_axis_labels("", "")
    for ax in grid.axes.flat:
        ax.set_title(textwrap.fill(ax.get_title(), chars), fontsize=7)
        ax.tick_params(labelsize=7)
        ax.yaxis.set_major_locator(MaxNLocator(3 if not wide else 5))
        if numeric_x:
            ax.xaxis.set_major_locator(MaxNLocator(2 if not wide else 5))
        else:
            ax.tick_params(axis="x", labelrotation=90)
    for ax in grid._not_bottom_axes:  # category names once, under each column's last panel
        ax.tick_params(axis="x", labelbottom=False)
    ncol = 2 if wide else 1
    entries = len(grid.legend.texts) if grid.legend is not None else 0
    sns.move_legend(grid, "lower center", bbox_to_anchor=(0.5, 0.0), ncol=ncol,
                    frameon=False, fontsize=7, title_fontsize=7)
    # room for every row's titles and ticks, the legend, the axis label and the heading
    rows = math.ceil(len(grid.axes.flat) / grid._ncol)
    heading = title + (f"\n{note}" if note else "")
    legend_in = 0.1 + 0.17 * (math.ceil(entries / ncol) + 1)
    top_in = 0.3 + 0.14 * heading.count("\n")
    height = rows * (panel + DECOR_INCHES) + legend_in + 0.25 + top_in
    # the saved image adds a 0.1 in margin each side: the figure is that much narrower
    fig.set_size_inches(figure_width() - 0.25, height)
    legend = legend_in / height
    fig.text(0.5, legend + 0.02 / height, xlabel, ha="center", va="bottom", fontsize=7.5)
    fig.text(0.0, 0.5, ylabel, rotation=90, ha="left", va="center", fontsize=7.5)
    fig.suptitle(heading, fontsize=8.5)
    fig.tight_layout(rect=(0.04, legend + 0.25 / height, 1, 1 - top_in / height))


def metric_vs_accuracy(sims: pd.DataFrame, metrics: list[str], out_paths: list[Path]) -> None:
    """Each metric (mean over run pairs) against the runs' mean accuracy, by process type."""
    data = pd.concat([sims, _process(sims)], axis=1).melt(
        id_vars=["mean_accuracy", "error set", "runs"], value_vars=metrics, var_name="metric",
        value_name="value")
    data["metric"] = data["metric"].map(metric_name)
    data, largest = thinned(data, "metric")
    wrap, height = _panels(len(metrics))
    # the error set by shade, the runs' dependence by marker: no hue that means a classifier
    grid = sns.relplot(data=data, x="mean_accuracy", y="value", hue="error set",
                       style="runs", col="metric", col_wrap=wrap, kind="scatter", s=5,
                       alpha=0.6, linewidth=0,
                       palette=dict(zip(sorted(data["error set"].unique()),
                                        ("#1a1a1a", "#9a9a9a"), strict=False)),
                       markers={"dependent": "o", "independent": "X"},
                       height=height, aspect=1.0, facet_kws={"sharey": False})
    _tidy(grid, "mean accuracy of the runs", "mean over pairs", "Each metric against accuracy",
          height, f"{MAX_POINTS} of {largest} simulations a panel shown"
          if largest > MAX_POINTS else "")
    save_figure(grid.figure, out_paths)


def metric_by_distribution(sims: pd.DataFrame, metrics: list[str], out_paths: list[Path]) -> None:
    """Each metric's distribution by class-distribution type and number of classes."""
    data = sims.melt(id_vars=["distribution", "n_classes"], value_vars=metrics,
                     var_name="metric", value_name="value")
    data["metric"] = data["metric"].map(metric_name)
    data["classes"] = data["n_classes"].astype(str)
    # boxes of 4 distributions × their classes side by side need a panel wider than tall
    aspect = 1.3
    wrap, height = _panels(len(metrics), aspect)
    grid = sns.catplot(data=data, x="distribution", y="value", hue="classes", col="metric",
                       palette=greys(sorted(data["classes"].unique(), key=int)),
                       hue_order=sorted(data["classes"].unique(), key=int),
                       col_wrap=wrap, kind="box", fliersize=1, linewidth=0.6, height=height,
                       aspect=aspect, sharey=False)
    _tidy(grid, "class distribution", "mean over pairs", "Metrics by class distribution",
          height, numeric_x=False)
    save_figure(grid.figure, out_paths)


def _natural(value) -> tuple:
    """"class 2" before "class 10"."""
    import re

    match = re.search(r"\d+", str(value))
    return (str(value)[: match.start()] if match else str(value),
            int(match.group()) if match else 0, str(value))


def with_alphas(frame: pd.DataFrame, cases: dict[str, list[float]] | None) -> pd.DataFrame:
    """The ``case`` column as "Case 1: α = (1, 1, 1)", so that a panel says its parameters."""
    if not cases:
        return frame
    names = {name: f"{name}: α = ({', '.join(f'{a:g}' for a in alphas)})"
             for name, alphas in cases.items()}
    return frame.assign(case=frame["case"].map(lambda c: names.get(c, c)))


def dirichlet_class_densities(probs: pd.DataFrame, out_paths: list[Path],
                              cases: dict | None = None) -> None:
    """Density of each class's probability, one panel per case (seed 002, first figure)."""
    _densities_by_case(with_alphas(probs, cases), x="probability", hue="class",
                       xlabel="class probability", out_paths=out_paths, linewidth=0.8)


def _densities_by_case(frame: pd.DataFrame, *, x: str, hue: str, xlabel: str,
                       out_paths: list[Path], **kde) -> None:
    """Kernel densities of ``x`` on [0, 1] by ``hue``, one panel per case titled with its α."""
    import textwrap

    wrap, height = _panels(frame["case"].nunique())
    order = sorted(frame[hue].unique(), key=_natural)
    grid = sns.displot(data=frame, x=x, hue=hue, col="case", col_wrap=wrap, kind="kde",
                       palette=greys(order), hue_order=order,
                       common_norm=False, clip=(0, 1), height=height, aspect=1.0,
                       facet_kws={"sharey": False}, **kde)
    grid.set_titles("{col_name}")
    for ax in grid.axes.flat:  # a case's α wrapped to its panel's width
        ax.set_title(textwrap.fill(ax.get_title(), max(16, int(height * 14))), fontsize=7)
    grid.set_axis_labels(xlabel, "density")
    # the legend under the panels: beside them it widens the figure past the set's width
    sns.move_legend(grid, "lower center", bbox_to_anchor=(0.5, 0.0), ncol=3, frameon=False,
                    fontsize=7, title_fontsize=7)
    tall = grid.figure.get_figheight()
    grid.figure.set_size_inches(min(grid.figure.get_figwidth(), figure_width() - 0.25), tall)
    grid.figure.tight_layout(rect=(0, min(0.55 / tall, 0.4), 1, 1))
    save_figure(grid.figure, out_paths)


def dirichlet_h_ci_densities(per_sample: pd.DataFrame, out_paths: list[Path],
                             cases: dict | None = None) -> None:
    """Densities of normalised entropy H and confusion index CI per case (second figure)."""
    long = with_alphas(per_sample, cases).melt(id_vars=["case"], value_vars=["H", "CI"],
                                               var_name="statistic")
    _densities_by_case(long, x="value", hue="statistic", xlabel="value", out_paths=out_paths)


def dirichlet_ci_vs_h(per_sample: pd.DataFrame, out_paths: list[Path],
                      cases: dict | None = None) -> None:
    """CI against H for every simulated vector, coloured by case (third figure)."""
    per_sample, _ = thinned(with_alphas(per_sample, cases), "case", 4 * MAX_POINTS)
    side = min(figure_width() - 0.25, 4.5)  # the saved image adds its margin
    fig, ax = plt.subplots(figsize=(side, side))
    order = sorted(per_sample["case"].unique(), key=_natural)
    sns.scatterplot(data=per_sample, x="H", y="CI", hue="case", style="case", s=5, alpha=0.6,
                    linewidth=0, palette=greys(order), hue_order=order, style_order=order,
                    ax=ax)
    ax.set_xlabel("normalised Shannon entropy H")
    ax.set_ylabel("confusion index CI")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    # under the panel: inside it, the legend hid the cases' points near it
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False, fontsize=7,
              title="case", title_fontsize=7, markerscale=2)
    save_figure(fig, out_paths)
