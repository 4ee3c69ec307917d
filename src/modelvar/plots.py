"""Figures (seaborn). Summaries are per repeat, then shown as distributions over repeats."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

#: Fixed colours so a classifier looks the same in every figure.
CLASSIFIER_COLOURS = {"lr-sgd": "#1b9e77", "svm-sgd": "#d95f02", "xgb": "#7570b3", "mlp": "#e7298a"}
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
    for path in out_paths:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=150, metadata={"CreationDate": None} if path.suffix == ".pdf" else {})
    plt.close(fig)
