"""The study's headline figures (the report's Findings page), at the figure set's width
(:func:`modelvar.plots.common.figure_width`).

``sources_of_variance``: for each classifier and measure (the run-to-run SD of accuracy within a
repeat, the disagreement between two runs), one line per source alone — the control first, then
all sources combined and the test-set yardstick —, each dataset a small grey dot and the mean
over datasets a point in the classifier's colour and marker with its 95 % interval over datasets
(one dataset: over repeats; none over fewer than 3). Every classifier's panel of a measure has the
same x-scale, sized by the points; an interval beyond it is cut with an arrow head; a row a
classifier has no value for says why. ``accuracy_vs_reproducibility``: each dataset × classifier
as one point, its mean run accuracy against its mean percent agreement over the factorial grid.
``classifier_comparison``: per measure, each pair of classifiers' mean difference under each
source alone with its interval. ``dose_response``: each source against its strength.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from modelvar.findings.sources import COMBINED, YARDSTICK, source_names
from modelvar.plots.common import (
    classifier_colours,
    classifier_markers,
    columns_that_fit,
    figure_width,
    legend_band,
    row_inches,
    save_figure,
    wrap_label,
)

MEASURES = {"accuracy_sd": "run-to-run SD of accuracy",
            "disagreement": "disagreement between two runs"}
#: an interval end beyond the axis (which is sized by the points, not the intervals) is cut there
#: and marked with an arrow head
HEADROOM = 1.15


def _level_order(sources: pd.DataFrame) -> list[str]:
    order = {s: i for i, s in enumerate(source_names())}
    levels = sources[["source", "level"]].drop_duplicates()
    levels = levels.assign(o=levels["source"].map(order)).sort_values(["o", "level"])
    return list(levels["level"])


def _why_missing(source: str) -> str:
    """Why a classifier has no row for a source: the model seed's or a family's reach."""
    from modelvar.study import families

    if source == "model_seed":
        return "takes no model seed"
    if source in families.names() and families.family(source).reach:
        return f"no {families.family(source).reach} feature"
    return "not run"


def _as_drawn(sources: pd.DataFrame) -> pd.DataFrame:
    """The sources table as the figure draws it: all-combined rows under one label (their
    cells differ by dataset where a family cannot act)."""
    return sources.assign(level=np.where(sources["source"] == COMBINED, "all combined",
                                         sources["level"]))


def _interval(ax, x, y, low, high, hi, colour, marker, label=None):
    """A point with its interval; ends beyond ``hi`` cut there with an arrow head; no bar
    where there is no interval."""
    ax.plot([x], [y], marker=marker, color=colour, markeredgecolor="black",
            markeredgewidth=0.5, markersize=4.5, linestyle="none", zorder=3, label=label)
    if not (np.isfinite(low) and np.isfinite(high)) or high - low <= 0:
        return
    ax.plot([max(low, 0), min(high, hi)], [y, y], color="black", linewidth=0.8, zorder=2)
    if high > hi:
        ax.plot([hi], [y], marker=">", color="black", markersize=3.5, zorder=2)


def sources_figure(sources: pd.DataFrame, out_paths: list[Path], *,
                   title: str | None = None) -> None:
    """The headline figure (module docstring); one dataset's with ``title``. Every classifier's
    panel of a measure has the same x-scale, sized by the points (an interval beyond it is cut
    with an arrow head); a source that cannot act on a classifier has its row labelled with
    the reason; a mean over fewer datasets than an interval needs is a point alone."""
    from modelvar.findings.sources import study_sources

    sources = _as_drawn(sources)
    n_datasets = sources["dataset"].nunique()
    study = study_sources(sources) if n_datasets > 1 else sources
    classifiers = list(dict.fromkeys(sources["classifier"]))
    levels = _level_order(sources)
    counts = sources.groupby("level")["dataset"].nunique()
    ticks = [wrap_label(f"{lv} ({counts[lv]} of {n_datasets})" if n_datasets > 1 and
                        counts[lv] < n_datasets else lv, 0.4) for lv in levels]
    source_of = dict(zip(sources["level"], sources["source"], strict=False))
    measures = list(MEASURES)
    side_by_side = columns_that_fit(2.0, 2, margin=1.6) == 2
    n_rows = len(classifiers) * (1 if side_by_side else len(measures))
    n_cols = len(measures) if side_by_side else 1
    fig, axes = plt.subplots(n_rows, n_cols, squeeze=False, sharey=True,
                             figsize=(figure_width(),
                                      0.7 + n_rows * (row_inches(ticks) * len(levels) + 0.42)))
    y_of = {level: i for i, level in enumerate(levels)}
    colours, markers = classifier_colours(classifiers), classifier_markers(classifiers)
    shown_points = pd.concat([sources, study]) if n_datasets > 1 else sources
    hi = {m: max(float(np.nanmax(shown_points[m])) * HEADROOM, 1e-3) for m in measures}
    for r, clf in enumerate(classifiers):
        mine = sources[sources["classifier"] == clf]
        means = study[study["classifier"] == clf]
        for k, measure in enumerate(measures):
            ax = axes[r][k] if side_by_side else axes[r * len(measures) + k][0]
            if n_datasets > 1:
                dots = mine.dropna(subset=[measure])
                jitter = np.random.default_rng(r * 7 + k).uniform(-0.15, 0.15, len(dots))
                ax.scatter(np.minimum(dots[measure], hi[measure]), dots["level"].map(y_of)
                           + jitter, s=6, color="#999999", alpha=0.8, label="one dataset",
                           zorder=1, linewidths=0)
            first = True
            for _, row in means.dropna(subset=[measure]).iterrows():
                _interval(ax, row[measure], y_of[row["level"]], row[f"{measure}_low"],
                          row[f"{measure}_high"], hi[measure], colours[clf], markers[clf],
                          label=clf if first else None)
                first = False
            drawn = set(mine.dropna(subset=[measure])["level"])
            for level in levels:
                if level in drawn:
                    continue
                why = "accuracy only" if source_of[level] == YARDSTICK else \
                    _why_missing(source_of[level])
                ax.text(0.02 * hi[measure], y_of[level], f"– {why}", va="center", ha="left",
                        fontsize=7, color="#555555")
            ax.set_yticks(range(len(levels)), ticks)
            ax.set_ylim(len(levels) - 0.5, -0.5)
            ax.set_xlim(0, hi[measure])
            ax.xaxis.set_major_locator(plt.MaxNLocator(5))  # room between 4-decimal labels
            ax.grid(axis="x", alpha=0.3)
            ax.set_title(f"{clf}: {MEASURES[measure]}", fontsize=7.5, color=colours[clf],
                         loc="left")
    handles = [plt.Line2D([], [], marker=markers[c], color=colours[c], markeredgecolor="black",
                          markeredgewidth=0.5, linestyle="none", label=c) for c in classifiers]
    if n_datasets > 1:
        handles.append(plt.Line2D([], [], marker="o", color="#999999", linestyle="none",
                                  markersize=3, label="one dataset"))
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 4 if side_by_side
                                                             else 3), frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(title or ("Sources of variance, each alone against the control"
                           if side_by_side else "Sources of variance, each alone"))
    # the legend's own band at the bottom: a fixed height, whatever the figure's
    fig.tight_layout(rect=(0, legend_band(fig, 1 + (len(handles) > (4 if side_by_side else 3))),
                           1, 1))
    save_figure(fig, out_paths)


def accuracy_vs_reproducibility(summary: pd.DataFrame,
                                roles: dict[tuple[str, str], dict[str, tuple]],
                                out_paths: list[Path]) -> None:
    """Mean run accuracy against mean percent agreement over each dataset × classifier's
    factorial grid (``roles[(dataset, classifier)]``: cell id → its parts of the design)."""
    rows = []
    for (dataset, classifier), part in summary.groupby(["dataset", "classifier"], sort=False,
                                                       observed=True):
        grid = {c for c, r in roles.get((str(dataset), str(classifier)), {}).items()
                if "factorial" in r}
        part = part[part["cell"].isin(grid)]
        acc = part.loc[part["metric"] == "accuracy", "mean"].mean()
        pa = part.loc[part["metric"] == "pa", "mean"].mean()
        rows.append({"dataset": str(dataset), "classifier": str(classifier), "accuracy": acc,
                     "pa": pa})
    points = pd.DataFrame(rows)
    width = min(figure_width(), 5.0)
    fig, ax = plt.subplots(figsize=(width, width * 0.72))
    colours = classifier_colours(points["classifier"])
    markers = classifier_markers(points["classifier"])
    for clf, part in points.groupby("classifier", sort=True):
        ax.scatter(part["accuracy"], part["pa"], s=22, label=clf, marker=markers[clf],
                   color=colours[clf], edgecolor="black", linewidths=0.4, zorder=3)
    if points["dataset"].nunique() <= 12:
        x_mid = (points["accuracy"].min() + points["accuracy"].max()) / 2
        for _, p in points.iterrows():  # names point inwards, away from the frame
            right = p["accuracy"] <= x_mid
            ax.annotate(p["dataset"], (p["accuracy"], p["pa"]), fontsize=7,
                        xytext=(4 if right else -4, 3), textcoords="offset points",
                        ha="left" if right else "right", color="#444444")
    ax.margins(x=0.12, y=0.12)
    ax.set_xlabel("mean run accuracy (factorial grid)")
    ax.set_ylabel("mean percent agreement")
    ax.grid(alpha=0.3)
    ax.legend(title="classifier", frameon=False)
    ax.set_title("Accuracy and reproducibility")
    fig.tight_layout()
    save_figure(fig, out_paths)


COMPARED = {"disagreement": "disagreement, a − b", "accuracy_sd": "run-to-run accuracy SD, a − b"}
#: a colour per pair of classifiers (Okabe–Ito, then black)
PAIR_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")


def comparison_figure(comparison: pd.DataFrame, study: pd.DataFrame,
                      out_paths: list[Path]) -> None:
    """Classifiers compared per source (:mod:`modelvar.findings.comparison`): for each measure
    (a panel), one line per source level alone (and all combined), one marker per pair of
    classifiers "a − b" at its mean difference with its 95 % interval (over datasets when there
    are several, else over repeats; none over fewer than 3); left of 0, a is the more
    reproducible."""
    several = comparison["dataset"].nunique() > 1
    shown = _as_drawn(study if several else comparison)
    shown = shown[shown["source"] != YARDSTICK]
    levels = _level_order(shown) if len(shown) else []
    pairs = list(dict.fromkeys(zip(shown["classifier_a"], shown["classifier_b"], strict=True)))
    n_cols = columns_that_fit(2.6, len(COMPARED), margin=1.4)
    n_rows = math.ceil(len(COMPARED) / n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, squeeze=False, sharey=True,
                             figsize=(figure_width(), 0.6 + n_rows * (
                                 0.45 + 0.16 * max(len(levels), 1) * max(1, len(pairs) / 3))))
    y_of = {level: i for i, level in enumerate(levels)}
    markers = "osD^vPX*"
    for c, (measure, heading) in enumerate(COMPARED.items()):
        ax = axes[c // n_cols][c % n_cols]
        for k, (a, b) in enumerate(pairs):
            part = shown[(shown["classifier_a"] == a) & (shown["classifier_b"] == b)
                         & (shown["measure"] == measure)].dropna(subset=["difference"])
            offset = (k - (len(pairs) - 1) / 2) * min(0.6 / max(len(pairs), 1), 0.2)
            ys = part["level"].map(y_of) + offset
            low = (part["difference"] - part["difference_low"]).fillna(0).clip(lower=0)
            high = (part["difference_high"] - part["difference"]).fillna(0).clip(lower=0)
            ax.errorbar(part["difference"], ys, xerr=[low, high], fmt=markers[k % 8],
                        color=PAIR_COLOURS[k % len(PAIR_COLOURS)], elinewidth=0.8, capsize=1.5,
                        markersize=4, label=f"{a} − {b}")
        ax.axvline(0, color="black", linewidth=0.6)
        ax.xaxis.set_major_locator(plt.MaxNLocator(5))
        ax.set_yticks(range(len(levels)), levels)
        ax.set_ylim(len(levels) - 0.5, -0.5)
        ax.grid(axis="x", alpha=0.3)
        ax.set_title(heading, loc="left")
    for c in range(len(COMPARED), n_rows * n_cols):
        axes[c // n_cols][c % n_cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(pairs), 3) or 1,
               frameon=False, bbox_to_anchor=(0.5, 0.0))
    fig.suptitle("Classifiers compared, each source alone")
    fig.tight_layout(rect=(0, legend_band(fig, math.ceil(max(len(pairs), 1) / 3)), 1, 1))
    save_figure(fig, out_paths)


def dose_response_figure(dose: pd.DataFrame, out_paths: list[Path]) -> None:
    """Dose-response (:mod:`modelvar.findings.dose`): per curve (a family on one strength
    axis) a pair of panels, accuracy SD over disagreement, against strength, a line per
    dataset × classifier in the classifier's colour and marker; with one dataset, the test-set
    yardstick dashed. Curves wrap into rows at a narrow width. Without any curve, a figure that
    says so."""
    curves = list(dict.fromkeys(zip(dose["family"], dose["scheme"], dose["axis"],
                                    strict=True)))
    if not curves:
        fig, ax = plt.subplots(figsize=(min(figure_width(), 5.0), 1.2))
        ax.axis("off")
        ax.text(0.5, 0.5, "No source was run at two or more strengths alone on one axis:\n"
                "no dose-response to draw.", ha="center", va="center")
        save_figure(fig, out_paths)
        return
    colours = classifier_colours(dose["classifier"])
    markers = classifier_markers(dose["classifier"])
    several = dose["dataset"].nunique() > 1
    n_cols = columns_that_fit(1.8, len(curves), margin=0.6)
    blocks = math.ceil(len(curves) / n_cols)
    fig, axes = plt.subplots(2 * blocks, n_cols, squeeze=False,
                             figsize=(figure_width(), 0.5 + blocks * 3.2))
    for i, (family, scheme, axis_words) in enumerate(curves):
        part = dose[(dose["family"] == family) & (dose["scheme"] == scheme)]
        for r, (measure, heading) in enumerate(MEASURES.items()):
            ax = axes[2 * (i // n_cols) + r][i % n_cols]
            for (_dataset, clf), line in part.groupby(["dataset", "classifier"], sort=False):
                line = line.sort_values("strength")
                ax.plot(line["strength"], line[measure], marker=markers[clf], markersize=3,
                        linewidth=0.8 if several else 1.2, alpha=0.7 if several else 1.0,
                        color=colours[clf], label=clf)
                if not several and measure == "accuracy_sd":
                    ax.axhline(line["yardstick"].iloc[0], color=colours[clf], linestyle="--",
                               linewidth=0.6)
            ax.grid(alpha=0.3)
            if r == 0:
                ax.set_title(f"{family}" + ("" if scheme == "realised" else f" ({scheme})"),
                             loc="left")
            else:
                ax.set_xlabel(textwrap.fill(axis_words, 28))
            if i % n_cols == 0:
                ax.set_ylabel(heading.replace(" between two runs", ""))
    for i in range(len(curves), blocks * n_cols):
        for r in range(2):
            axes[2 * (i // n_cols) + r][i % n_cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    fig.legend(unique.values(), unique.keys(), loc="lower center", ncol=min(len(unique), 4),
               frameon=False, bbox_to_anchor=(0.5, 0.0))
    fig.suptitle("Dose-response: each source against its strength")
    fig.tight_layout(rect=(0, legend_band(fig, math.ceil(max(len(unique), 1) / 4)), 1, 1))
    save_figure(fig, out_paths)
