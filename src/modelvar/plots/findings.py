"""The study's headline figures (the report's Findings page).

``sources_of_variance``: for each classifier (row) and measure (column: the run-to-run SD of
accuracy within a repeat, and the disagreement between two runs), one line per source alone —
the control first, the test-set yardstick last —, each dataset a small dot and the mean over
datasets a black point with its 95 % interval over datasets (one dataset: its interval over
repeats). ``accuracy_vs_reproducibility``: each dataset × classifier as one point, its mean run
accuracy against its mean percent agreement over the factorial grid. ``classifier_comparison``:
per measure, each pair of classifiers' mean difference under each source alone with its interval.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from modelvar.findings.sources import COMBINED, YARDSTICK, source_names
from modelvar.plots.common import classifier_colours, save_figure

MEASURES = {"accuracy_sd": "run-to-run SD of accuracy\nwithin a repeat",
            "disagreement": "disagreement between two runs\n(share of test samples)"}


def _level_order(sources: pd.DataFrame) -> list[str]:
    order = {s: i for i, s in enumerate(source_names())}
    levels = sources[["source", "level"]].drop_duplicates()
    levels = levels.assign(o=levels["source"].map(order)).sort_values(["o", "level"])
    return list(levels["level"])


def sources_figure(sources: pd.DataFrame, study: pd.DataFrame, out_paths: list[Path], *,
                   title: str | None = None) -> None:
    """The headline figure (module docstring); one dataset's with ``title``."""
    classifiers = list(dict.fromkeys(sources["classifier"]))
    levels = _level_order(sources)
    n_datasets = sources["dataset"].nunique()
    fig, axes = plt.subplots(len(classifiers), len(MEASURES), squeeze=False, sharey=True,
                             figsize=(9.0, 0.8 + len(classifiers) * (0.32 * len(levels) + 0.7)))
    y_of = {level: i for i, level in enumerate(levels)}
    colours = classifier_colours(classifiers)
    for r, clf in enumerate(classifiers):
        mine = sources[sources["classifier"] == clf]
        summary = study[study["classifier"] == clf]
        for c, (measure, heading) in enumerate(MEASURES.items()):
            ax = axes[r][c]
            shown = mine.dropna(subset=[measure])
            if n_datasets > 1:
                ax.scatter(shown[measure], shown["level"].map(y_of) + np.random.default_rng(
                    r * 7 + c).uniform(-0.15, 0.15, len(shown)), s=12, color="#999999",
                    alpha=0.7, label="a dataset", zorder=2)
            if n_datasets > 1:
                mean = summary.dropna(subset=[measure])
                low, high = mean[f"{measure}_low"], mean[f"{measure}_high"]
            else:
                mean = shown
                low, high = shown[f"{measure}_low"], shown[f"{measure}_high"]
            ys = mean["level"].map(y_of)
            ax.errorbar(mean[measure], ys, xerr=[np.clip(mean[measure] - low, 0, None),
                                                 np.clip(high - mean[measure], 0, None)],
                        fmt="o", color=colours[clf], ecolor="black",
                        elinewidth=1, capsize=2, markersize=5, zorder=3,
                        label="mean over datasets, 95 % CI" if n_datasets > 1 else
                        "mean over repeats, 95 % CI")
            ax.set_yticks(range(len(levels)), levels, fontsize=8)
            ax.set_ylim(len(levels) - 0.5, -0.5)
            ax.grid(axis="x", alpha=0.3)
            ax.set_xlim(left=0)
            if r == 0:
                ax.set_title(heading, fontsize=9)
            if c == 0:
                ax.set_ylabel(clf, fontsize=10, color=colours[clf])
            ax.tick_params(axis="x", labelsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, -0.01))
    fig.suptitle(textwrap.fill(title or (
        f"Each source of variance alone against the control ({n_datasets} dataset"
        f"{'s' if n_datasets > 1 else ''}; the test-set row: SD of the control's accuracy "
        "between repeats)"), 110), fontsize=10)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    save_figure(fig, out_paths)


def accuracy_vs_reproducibility(summary: pd.DataFrame, roles: dict[str, dict[str, tuple]],
                                out_paths: list[Path]) -> None:
    """Mean run accuracy against mean percent agreement over each dataset's factorial grid."""
    rows = []
    for (dataset, classifier), part in summary.groupby(["dataset", "classifier"], sort=False,
                                                       observed=True):
        grid = {c for c, r in roles.get(str(dataset), {}).items() if "factorial" in r}
        part = part[part["cell"].isin(grid)]
        acc = part.loc[part["metric"] == "accuracy", "mean"].mean()
        pa = part.loc[part["metric"] == "pa", "mean"].mean()
        rows.append({"dataset": str(dataset), "classifier": str(classifier), "accuracy": acc,
                     "pa": pa})
    points = pd.DataFrame(rows)
    fig, ax = plt.subplots(figsize=(7.5, 5.0))
    colours = classifier_colours(points["classifier"])
    for clf, part in points.groupby("classifier", sort=True):
        ax.scatter(part["accuracy"], part["pa"], s=36, label=clf,
                   color=colours[clf], edgecolor="white", zorder=3)
        if points["dataset"].nunique() <= 12:
            for _, p in part.iterrows():
                ax.annotate(p["dataset"], (p["accuracy"], p["pa"]), fontsize=7,
                            xytext=(3, 3), textcoords="offset points", color="#444444")
    ax.set_xlabel("mean run accuracy over the factorial grid")
    ax.set_ylabel("mean percent agreement between two runs")
    ax.grid(alpha=0.3)
    ax.legend(title="classifier", fontsize=8, title_fontsize=8, frameon=False)
    ax.set_title(f"Accuracy and reproducibility: each point one dataset × classifier "
                 f"({len(points)} points)", fontsize=10)
    fig.tight_layout()
    save_figure(fig, out_paths)


COMPARED = {"disagreement": "difference in disagreement\n(a − b; < 0: a's predictions changed "
                            "less)",
            "accuracy_sd": "difference in run-to-run accuracy SD\n(a − b; < 0: a's accuracy "
                           "varied less)"}


def comparison_figure(comparison: pd.DataFrame, study: pd.DataFrame,
                      out_paths: list[Path]) -> None:
    """Classifiers compared per source (:mod:`modelvar.findings.comparison`): for each measure
    (column), one line per source level alone, one marker per pair of classifiers "a − b" at
    its mean difference with its 95 % interval (over datasets when there are several, else over
    repeats); left of 0, a is the more reproducible."""
    several = comparison["dataset"].nunique() > 1
    shown = study if several else comparison
    shown = shown[~shown["source"].isin([COMBINED, YARDSTICK])]
    levels = _level_order(shown) if len(shown) else []
    pairs = list(dict.fromkeys(zip(shown["classifier_a"], shown["classifier_b"], strict=True)))
    fig, axes = plt.subplots(1, len(COMPARED), squeeze=False, sharey=True,
                             figsize=(9.0, 1.6 + 0.34 * max(len(levels), 1) * max(
                                 1, len(pairs) / 3)))
    y_of = {level: i for i, level in enumerate(levels)}
    markers = "osD^v<>Xp*h"
    palette = plt.get_cmap("tab10")
    for c, (measure, heading) in enumerate(COMPARED.items()):
        ax = axes[0][c]
        for k, (a, b) in enumerate(pairs):
            part = shown[(shown["classifier_a"] == a) & (shown["classifier_b"] == b)
                         & (shown["measure"] == measure)].dropna(subset=["difference"])
            offset = (k - (len(pairs) - 1) / 2) * min(0.6 / max(len(pairs), 1), 0.2)
            ys = part["level"].map(y_of) + offset
            low = (part["difference"] - part["difference_low"]).fillna(0).clip(lower=0)
            high = (part["difference_high"] - part["difference"]).fillna(0).clip(lower=0)
            ax.errorbar(part["difference"], ys, xerr=[low, high], fmt=markers[k % 11],
                        color=palette(k % 10), elinewidth=1, capsize=2, markersize=5,
                        label=f"{a} − {b}")
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(levels)), levels, fontsize=8)
        ax.set_ylim(len(levels) - 0.5, -0.5)
        ax.grid(axis="x", alpha=0.3)
        ax.set_title(heading, fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(pairs), 4) or 1, fontsize=8,
               frameon=False, bbox_to_anchor=(0.5, -0.01))
    n = comparison["dataset"].nunique()
    fig.suptitle(textwrap.fill(
        f"Classifiers compared, each source alone: mean difference a − b with its 95 % interval "
        f"({f'over {n} datasets' if several else 'paired over repeats'})", 110), fontsize=10)
    fig.tight_layout(rect=(0, 0.06 + 0.02 * (len(pairs) > 4), 1, 1))
    save_figure(fig, out_paths)


def dose_response_figure(dose: pd.DataFrame, out_paths: list[Path]) -> None:
    """Dose-response (:mod:`modelvar.findings.dose`): one column per curve (a family on one
    strength axis), rows accuracy SD and disagreement against strength, a line per dataset ×
    classifier in the classifier's colour; with one dataset, the test-set yardstick dashed.
    Without any curve, a figure that says so."""
    curves = list(dict.fromkeys(zip(dose["family"], dose["scheme"], dose["axis"],
                                    strict=True)))
    if not curves:
        fig, ax = plt.subplots(figsize=(6.0, 1.6))
        ax.axis("off")
        ax.text(0.5, 0.5, "No source was run at two or more strengths alone on one axis:\n"
                "no dose-response to draw.", ha="center", va="center", fontsize=10)
        save_figure(fig, out_paths)
        return
    colours = classifier_colours(dose["classifier"])
    several = dose["dataset"].nunique() > 1
    fig, axes = plt.subplots(2, len(curves), squeeze=False,
                             figsize=(min(13.0, 1.2 + 3.4 * len(curves)), 5.6))
    for c, (family, scheme, axis_words) in enumerate(curves):
        part = dose[(dose["family"] == family) & (dose["scheme"] == scheme)]
        for r, (measure, heading) in enumerate(MEASURES.items()):
            ax = axes[r][c]
            for (_dataset, clf), line in part.groupby(["dataset", "classifier"], sort=False):
                line = line.sort_values("strength")
                ax.plot(line["strength"], line[measure], marker="o", markersize=4,
                        linewidth=1.0 if several else 1.6, alpha=0.6 if several else 1.0,
                        color=colours[clf], label=clf)
                if not several and measure == "accuracy_sd":
                    ax.axhline(line["yardstick"].iloc[0], color=colours[clf], linestyle="--",
                               linewidth=0.8)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=8)
            if r == 0:
                ax.set_title(f"{family}" + ("" if scheme == "realised" else f" ({scheme})"),
                             fontsize=9)
            if r == 1:
                ax.set_xlabel(textwrap.fill(axis_words, 34), fontsize=8)
            if c == 0:
                ax.set_ylabel(heading, fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    fig.legend(unique.values(), unique.keys(), loc="lower center", ncol=len(unique),
               fontsize=8, frameon=False, bbox_to_anchor=(0.5, -0.01))
    fig.suptitle(textwrap.fill(
        "Dose-response: each source's effect against its strength, the control at 0"
        + ("" if several else " (dashed: the test-set yardstick)"), 110), fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    save_figure(fig, out_paths)
