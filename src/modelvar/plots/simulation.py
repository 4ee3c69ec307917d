"""Figures of the simulation studies (seeds 000 and 002), seaborn, at the figure set's width
(:func:`modelvar.plots.common.figure_width`). Point clouds larger than :data:`MAX_POINTS` a
panel are thinned to a fixed random sample of that many (the panel says so)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

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


def _panels(n: int) -> tuple[int, float]:
    """(panels a row, panel height in inches) for ``n`` panels at the figure width."""
    wrap = columns_that_fit(1.6, n, margin=0.4)
    return wrap, (figure_width() - 0.4) / wrap * 0.95


def _process(sims: pd.DataFrame) -> pd.Series:
    dep = sims["dependent"].map({True: "dependent", False: "independent"})
    return sims["error_set"] + " error set, " + dep


def _tidy(grid, xlabel: str, ylabel: str) -> None:
    """Panel titles that fit their panel (wrapped, small), the legend under the panels, so that
    the figure stays within the report's width."""
    import textwrap

    grid.set_titles("{col_name}")
    grid.set_axis_labels(xlabel, ylabel)
    for ax in grid.axes.flat:
        ax.set_title(textwrap.fill(ax.get_title(), 24), fontsize=7)
        ax.tick_params(labelsize=7)
    sns.move_legend(grid, "lower center", bbox_to_anchor=(0.5, -0.02), ncol=2, frameon=False,
                    fontsize=7, title_fontsize=7)


def metric_vs_accuracy(sims: pd.DataFrame, metrics: list[str], out_paths: list[Path]) -> None:
    """Each metric (mean over run pairs) against the runs' mean accuracy, by process type."""
    data = sims.assign(process=_process(sims)).melt(
        id_vars=["mean_accuracy", "process"], value_vars=metrics, var_name="metric",
        value_name="value")
    data["metric"] = data["metric"].map(metric_name)
    data, largest = thinned(data, "metric")
    wrap, height = _panels(len(metrics))
    grid = sns.relplot(data=data, x="mean_accuracy", y="value", hue="process", col="metric",
                       col_wrap=wrap, kind="scatter", s=4, alpha=0.5, linewidth=0,
                       height=height, aspect=1.0, facet_kws={"sharey": False})
    _tidy(grid, "mean accuracy of the runs", "mean over pairs")
    if largest > MAX_POINTS:
        grid.figure.text(0.5, 1.0, f"{MAX_POINTS} of {largest} simulations a panel shown",
                         ha="center", va="top", fontsize=7, color="#444444")
    grid.figure.suptitle("Each metric against accuracy", y=1.0, va="bottom", fontsize=8.5)
    save_figure(grid.figure, out_paths)


def metric_by_distribution(sims: pd.DataFrame, metrics: list[str], out_paths: list[Path]) -> None:
    """Each metric's distribution by class-distribution type and number of classes."""
    data = sims.melt(id_vars=["distribution", "n_classes"], value_vars=metrics,
                     var_name="metric", value_name="value")
    data["metric"] = data["metric"].map(metric_name)
    data["classes"] = data["n_classes"].astype(str)
    wrap, height = _panels(len(metrics))
    grid = sns.catplot(data=data, x="distribution", y="value", hue="classes", col="metric",
                       col_wrap=wrap, kind="box", fliersize=1, linewidth=0.6, height=height,
                       aspect=1.0, sharey=False)
    _tidy(grid, "class distribution", "mean over pairs")
    for ax in grid.axes.flat:
        ax.tick_params(axis="x", labelrotation=30)
    grid.figure.suptitle("Metrics by class distribution", y=1.0, va="bottom", fontsize=8.5)
    save_figure(grid.figure, out_paths)


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
    wrap, height = _panels(frame["case"].nunique())
    grid = sns.displot(data=frame, x=x, hue=hue, col="case", col_wrap=wrap, kind="kde",
                       common_norm=False, clip=(0, 1), height=height, aspect=1.0,
                       facet_kws={"sharey": False}, **kde)
    grid.set_titles("{col_name}")
    for ax in grid.axes.flat:
        ax.title.set_fontsize(7)
    grid.set_axis_labels(xlabel, "density")
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
    side = min(figure_width(), 4.5)
    fig, ax = plt.subplots(figsize=(side, side))
    sns.scatterplot(data=per_sample, x="H", y="CI", hue="case", s=4, alpha=0.5, linewidth=0,
                    ax=ax)
    ax.set_xlabel("normalised Shannon entropy H")
    ax.set_ylabel("confusion index CI")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    save_figure(fig, out_paths)
