"""Figures (seaborn). Summaries are per repeat, then shown as distributions over repeats."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from modelvar.plots.common import CLASSIFIER_COLOURS, save_figure

METRIC_LABELS = {
    "ec_global": "global EC (both wrong, rate)",
    "ec_local": "local EC (Jaccard of error sets)",
    "pa": "percent agreement",
    "accuracy": "accuracy",
}


def repeat_means_violin(
    summary: pd.DataFrame,
    dataset: str,
    out_paths: list[Path],
    metrics: tuple[str, ...] = ("accuracy", "ec_global", "ec_local", "pa"),
) -> None:
    """Violin per metric: distribution over repeats of the repeat's mean, by cell and classifier."""
    data = summary[(summary["subset"] == "all") & summary["metric"].isin(metrics)].copy()
    if data.empty:
        raise ValueError(f"{dataset}: no summaries for metrics {metrics}")
    palette = {c: CLASSIFIER_COLOURS.get(c, "#666666") for c in data["classifier"].unique()}
    n_cells = data["cell"].nunique()
    height = max(3.5, 0.45 * n_cells * data["classifier"].nunique() ** 0.5 + 1.5)
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.6 * len(metrics) + 2.5, height),
                             sharey=True, squeeze=False)
    order = sorted(data["cell"].unique())
    for ax, metric in zip(axes[0], metrics, strict=True):
        part = data[data["metric"] == metric]
        sns.violinplot(
            data=part, y="cell", x="mean", hue="classifier", palette=palette, order=order,
            orient="h", cut=0, inner="point", density_norm="width", linewidth=0.6, ax=ax,
        )
        ax.set_title(METRIC_LABELS.get(metric, metric), fontsize=10)
        ax.set_xlabel("repeat mean")
        ax.set_ylabel("perturbation cell" if ax is axes[0][0] else "")
        ax.grid(axis="x", alpha=0.3)
        if ax is not axes[0][-1] and ax.get_legend() is not None:
            ax.get_legend().remove()
    legend = axes[0][-1].get_legend()
    if legend is not None:
        sns.move_legend(axes[0][-1], "upper left", bbox_to_anchor=(1.02, 1), frameon=False)
    fig.suptitle(f"{dataset}: per-repeat means over repeats")
    fig.tight_layout()
    save_figure(fig, out_paths)


# ----------------------------------------------------------------------------- figure sets
FAMILY_LABELS = {
    "data": "data perturbation",
    "categorical": "categorical perturbation",
    "hparam": "hparam perturbation",
    "downsample": "training fraction",
    "model_seed": "model seed",
}
EC_METRICS = ("ec_global", "ec_local", "ec_global_accnorm_sqrt", "ec_local_accnorm_sqrt")
METRIC_LABELS.update({
    "ec_global_accnorm_sqrt": "global EC, accuracy-normalised (sqrt)",
    "ec_local_accnorm_sqrt": "local EC, accuracy-normalised (sqrt)",
    "mean_pa": "percent agreement",
    "mean_ec_global": "global EC",
    "mean_accuracy": "mean accuracy",
})


def pretty_level(level: str) -> str:
    """Readable level id: ``rel0p2`` → ``rel 0.2``, ``down050`` → ``50%``, ``dnone`` → ``none``."""
    if level in ("dnone", "cnone", "hnone"):
        return "none"
    if level.startswith("down"):
        return f"{int(level[4:])}%"
    if level.startswith("seed"):
        return {"seedrun": "per run", "seedfix": "fixed"}.get(level, level)
    if level[:4] in ("hsig", "hrel", "habs"):
        level = level[1:]
    head = level.rstrip("0123456789p")
    return f"{head} {level[len(head):].replace('p', '.')}"


def _prepared(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for family in FAMILY_LABELS:
        if family in out.columns:
            out[family] = out[family].map(pretty_level)
    return out


def _palette(frame: pd.DataFrame) -> dict[str, str]:
    return {c: CLASSIFIER_COLOURS.get(c, "#666666") for c in frame["classifier"].unique()}


def _level_key(value: str):
    """'none' first, then by scheme name, then numerically (so 50% comes before 100%)."""
    match = re.search(r"[-+]?\d*\.?\d+", str(value))
    number = float(match.group()) if match else 0.0
    prefix = str(value)[: match.start()] if match else str(value)
    return (value != "none", prefix, number, str(value))


def _order(frame: pd.DataFrame, column: str) -> list[str]:
    return sorted(frame[column].unique(), key=_level_key)


def _facet_violins(data, *, x, y, row=None, col=None, title, xlabel=None, ylabel=None,
                   horizontal=False, sharex=True, sharey=True):
    """Violins of ``y`` by ``x`` and classifier (fixed colours), faceted by row/col."""
    kw = {}
    if row:
        kw["row"], kw["row_order"] = row, _order(data, row)
    if col:
        kw["col"], kw["col_order"] = col, _order(data, col)
    cat = y if horizontal else x
    order = _order(data, cat) if cat != "classifier" else sorted(data["classifier"].unique())
    grid = sns.catplot(
        data=data, kind="violin", x=x, y=y, hue="classifier", palette=_palette(data),
        order=order, hue_order=sorted(data["classifier"].unique()), cut=0, inner="quart",
        density_norm="width", linewidth=0.6, height=2.8, aspect=1.3, margin_titles=True,
        sharex=sharex, sharey=sharey, legend_out=True, **kw,
    )
    grid.set_axis_labels(xlabel or x, ylabel or y)
    grid.set_titles(
        row_template=f"{FAMILY_LABELS[row]}: {{row_name}}" if row in FAMILY_LABELS
        else "{row_name}",
        col_template=f"{FAMILY_LABELS[col]}: {{col_name}}" if col in FAMILY_LABELS
        else "{col_name}",
    )
    for ax in grid.axes.flat:
        ax.grid(axis="x" if horizontal else "y", alpha=0.3)
        if not horizontal:
            ax.tick_params(axis="x", labelrotation=30)
    width_chars = max(40, int(grid.figure.get_figwidth() * 11))
    grid.figure.suptitle(textwrap.fill(title, width_chars), y=1.0, va="bottom", fontsize=10)
    return grid.figure


def gross_accuracy_grid(per_run: pd.DataFrame, dataset: str, out_paths: list[Path]) -> None:
    """Every run's accuracy: rows data perturbation, columns hparam perturbation (seed 004)."""
    data = _prepared(per_run)
    fig = _facet_violins(
        data, x="classifier", y="accuracy", row="data", col="hparam",
        title=f"{dataset}: gross accuracies (all runs of all repeats; rows: data perturbation, "
              "columns: hparam perturbation)",
        xlabel="classifier", ylabel="accuracy",
    )
    save_figure(fig, out_paths)


def accuracy_by_data_perturbation(per_run: pd.DataFrame, dataset: str,
                                  out_paths: list[Path]) -> None:
    """Run accuracies by data perturbation level, one panel per training fraction."""
    data = _prepared(per_run)
    fig = _facet_violins(
        data, x="data", y="accuracy", col="downsample",
        title=f"{dataset}: accuracy by data perturbation (panels: training fraction)",
        xlabel="data perturbation", ylabel="accuracy",
    )
    save_figure(fig, out_paths)


def repeat_accuracy_ranges(summary: pd.DataFrame, dataset: str, out_paths: list[Path]) -> None:
    """Per repeat: max − min of its runs' accuracies; distributed over repeats (not pooled)."""
    data = _prepared(summary[(summary["metric"] == "accuracy") & (summary["subset"] == "all")])
    fig = _facet_violins(
        data, x="data", y="range", row="hparam", col="downsample",
        title=f"{dataset}: accuracy range within each repeat, over repeats "
              "(rows: hparam perturbation, columns: training fraction)",
        xlabel="data perturbation", ylabel="accuracy range in a repeat",
    )
    save_figure(fig, out_paths)


SHORT_LABELS = {
    "ec_global": "global EC", "ec_local": "local EC",
    "ec_global_accnorm_sqrt": "global EC, acc.-normalised",
    "ec_local_accnorm_sqrt": "local EC, acc.-normalised",
}


def _metric_long(summary: pd.DataFrame, metrics, stat: str) -> pd.DataFrame:
    data = summary[(summary["subset"] == "all") & summary["metric"].isin(metrics)].copy()
    data["metric"] = data["metric"].map(lambda m: SHORT_LABELS.get(m, m))
    return _prepared(data).rename(columns={stat: "value"})


def ec_distributions(summary: pd.DataFrame, dataset: str, out_paths: list[Path]) -> None:
    """Per-repeat mean global/local EC and their accuracy-normalised forms, over repeats."""
    data = _metric_long(summary, EC_METRICS, "mean")
    fig = _facet_violins(
        data, x="data", y="value", row="metric", col="downsample", sharey="row",
        title=f"{dataset}: error consistency, per-repeat means over repeats "
              "(columns: training fraction)",
        xlabel="data perturbation", ylabel="repeat mean",
    )
    save_figure(fig, out_paths)


def repeat_ec_ranges(summary: pd.DataFrame, dataset: str, out_paths: list[Path]) -> None:
    """Per repeat: range of the pairwise EC values among its run pairs; over repeats."""
    data = _metric_long(summary, ("ec_global", "ec_local"), "range")
    fig = _facet_violins(
        data, x="value", y="cell", col="metric", horizontal=True, sharex=False,
        title=f"{dataset}: range of pairwise EC within each repeat, over repeats",
        xlabel="range over run pairs", ylabel="perturbation cell",
    )
    save_figure(fig, out_paths)


def per_sample_instability(agreement: pd.DataFrame, dataset: str,
                           out_paths: list[Path]) -> None:
    """Per repeat: fraction of test samples whose predicted label changes across runs."""
    data = _prepared(agreement.rename(columns={"unstable_frac": "value"}))
    fig = _facet_violins(
        data, x="data", y="value", row="hparam", col="downsample",
        title=f"{dataset}: fraction of test samples predicted differently by some run, "
              "per repeat, over repeats",
        xlabel="data perturbation", ylabel="unstable fraction of test set",
    )
    save_figure(fig, out_paths)


def group_disparities(disparities: pd.DataFrame, dataset: str, out_paths: list[Path]) -> None:
    """Max − min over groups: of each run's accuracy, and of each repeat's reproducibility."""
    data = disparities[disparities["aggregate"] == "difference_minmax"].copy()
    per_run = data[(data["run"] >= 0) & (data["metric"] == "accuracy")].assign(
        metric="accuracy (per run)")
    per_repeat = data[(data["run"] < 0) & (data["metric"] != "mean_accuracy")].copy()
    per_repeat["metric"] = per_repeat["metric"].map(
        lambda m: f"{METRIC_LABELS.get(m, m)} (per repeat)")
    both = _prepared(pd.concat([per_run, per_repeat], ignore_index=True))
    if both.empty:
        raise ValueError(f"{dataset}: no disparities to plot")
    fig = _facet_violins(
        both, x="value", y="cell", row="grouping", col="metric", horizontal=True, sharex=False,
        title=f"{dataset}: largest difference between groups (max − min), over runs and repeats",
        xlabel="difference between groups", ylabel="perturbation cell",
    )
    save_figure(fig, out_paths)


FIGURE_FUNCTIONS = {
    "gross_accuracy_grid": ("per_run", gross_accuracy_grid),
    "accuracy_by_data_perturbation": ("per_run", accuracy_by_data_perturbation),
    "repeat_accuracy_ranges": ("summary", repeat_accuracy_ranges),
    "ec_distributions": ("summary", ec_distributions),
    "repeat_ec_means": ("summary", repeat_means_violin),
    "repeat_ec_ranges": ("summary", repeat_ec_ranges),
    "per_sample_instability": ("agreement", per_sample_instability),
}
