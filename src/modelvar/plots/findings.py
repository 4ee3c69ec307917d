"""The study's headline figures (the report's Findings page), at the figure set's width
(:func:`modelvar.plots.common.figure_width`).

``sources_of_variance``: per measure (the run-to-run SD of accuracy within a repeat, the
disagreement between two runs), one row per source alone, largest effect first, each
classifier × dataset its own mark with its interval over repeats, read against its test-set
yardstick (a band behind it), leaders told apart ringed; the axis holds every interval
(:func:`sources_figure`). ``accuracy_vs_reproducibility``: each dataset × classifier
as one point, its mean run accuracy against its mean percent agreement over the factorial grid.
``classifier_comparison``: per measure, each pair of classifiers' mean difference under each
source alone with its interval. ``dose_response``: each source against its strength.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib as mpl
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
#: the height of one mark's line in the headline, inches (at most; many marks a row share
#: :data:`ROW_INCHES`)
MARK_INCHES = 0.065
ROW_INCHES = 0.4
#: a value this close to 0, with no interval wider, is no effect (every run identical)
NO_EFFECT = 1e-12
#: the yardstick's band and the leaders' ring
BAND_GREY, RING = "#e3e3e3", "black"


def _level_order(sources: pd.DataFrame) -> list[str]:
    order = {s: i for i, s in enumerate(source_names())}
    levels = sources[["source", "level"]].drop_duplicates()
    levels = levels.assign(o=levels["source"].map(order)).sort_values(["o", "level"])
    return list(levels["level"])


def _by_effect(sources: pd.DataFrame) -> list[str]:
    """The levels drawn, largest effect first: the mean run-to-run SD of accuracy over
    classifiers and datasets (then the disagreement), the control last as the reference."""
    levels = [lv for lv in _level_order(sources) if lv != "control"]
    means = sources.groupby("level")[list(MEASURES)].mean()
    ranked = sorted(levels, key=lambda lv: (-np.nan_to_num(means.loc[lv, "accuracy_sd"],
                                                           nan=-1.0),
                                            -np.nan_to_num(means.loc[lv, "disagreement"],
                                                           nan=-1.0)))
    return ranked + (["control"] if "control" in set(sources["level"]) else [])


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


def _told_apart(leaders: pd.DataFrame | None) -> set[tuple[str, str, str, str]]:
    """(dataset, classifier, measure, level) of each leading source the page tells apart."""
    if leaders is None or leaders.empty:
        return set()
    held = leaders[leaders["verdict"] == "supported"]
    return set(zip(held["dataset"], held["classifier"], held["measure"], held["leader"],
                   strict=True))


def sources_figure(sources: pd.DataFrame, out_paths: list[Path], *,
                   leaders: pd.DataFrame | None = None,
                   title: str | None = None) -> pd.DataFrame:
    """The headline figure: per measure (the run-to-run SD of accuracy within a repeat, the
    disagreement between two runs) a panel with one row per source alone, largest effect
    first and the control last. In each row, one mark per classifier × dataset (classifier
    by colour and marker, datasets in the same order in every row, named in the legend), each
    its mean over repeats with its 95 % interval over repeats; behind each accuracy mark its
    dataset × classifier's test-set yardstick (the SD of accuracy between repeats) as a grey
    band from its interval's low to high end with a line at its value; a ring around a
    leading source the page tells apart (``leaders``: the margins table); a hollow mark where
    every run was identical (no effect). From :data:`~modelvar.findings.over_datasets.
    MIN_DATASETS` datasets on, where the page states claims over datasets, each classifier's
    mean over datasets with its interval over datasets is one more mark (a diamond). The
    axis holds every interval end; nothing is cut. A source that cannot act on a classifier
    says why in its row. Returns the drawn marks (one row each: panel, kind, classifier,
    dataset, level, value, interval ends, the panel's axis limits)."""
    from modelvar.findings.over_datasets import MIN_DATASETS
    from modelvar.findings.sources import study_sources

    sources = _as_drawn(sources)
    yard = sources[sources["source"] == YARDSTICK]
    shown = sources[sources["source"] != YARDSTICK]
    datasets = list(dict.fromkeys(sorted(shown["dataset"])))
    classifiers = sorted(set(shown["classifier"]))
    summary = len(datasets) >= MIN_DATASETS
    study = study_sources(shown) if summary else pd.DataFrame()
    levels = _by_effect(shown)
    counts = shown.groupby("level")["dataset"].nunique()
    ticks = [wrap_label(f"{lv} ({counts[lv]} of {len(datasets)})" if counts[lv] < len(datasets)
                        else lv, 0.35) for lv in levels]
    # each row: per classifier its datasets (then its mean over datasets), top to bottom
    slots = [(clf, d) for clf in classifiers for d in [*datasets, *(["mean"] if summary
                                                                    else [])]]
    mark = min(MARK_INCHES, ROW_INCHES / len(slots))
    row = max(row_inches(ticks), mark * len(slots) + 0.06)
    offsets = {slot: (i - (len(slots) - 1) / 2) * mark / row for i, slot in enumerate(slots)}
    size = min(4.5, 72 * mark * 0.9)
    colours, markers = classifier_colours(classifiers), classifier_markers(classifiers)
    told = _told_apart(leaders)
    measures = list(MEASURES)
    side_by_side = columns_that_fit(1.9, 2, margin=1.5) == 2
    n_rows, n_cols = (1, 2) if side_by_side else (2, 1)
    fig, axes = plt.subplots(n_rows, n_cols, squeeze=False, sharey=True,
                             figsize=(figure_width(),
                                      0.95 + n_rows * (row * len(levels) + 0.45)))
    y_of = {level: i for i, level in enumerate(levels)}
    source_of = dict(zip(shown["level"], shown["source"], strict=False))
    marks = []
    for k, measure in enumerate(measures):
        ax = axes.flat[k]
        panel = MEASURES[measure]
        ends = [shown[measure], shown[f"{measure}_low"], shown[f"{measure}_high"]]
        if measure == "accuracy_sd":
            ends += [yard[measure], yard[f"{measure}_low"], yard[f"{measure}_high"]]
        if summary:
            ends += [study[measure], study[f"{measure}_low"], study[f"{measure}_high"]]
        values = pd.concat(ends).astype(float)
        values = values[np.isfinite(values)]
        top = max(float(values.max()) if len(values) else 0.0, 1e-3) * 1.06
        # a little room left of the lowest end, so that a mark at 0 is drawn whole
        bottom = min(float(values.min()) if len(values) else 0.0, 0.0)
        bottom -= 0.03 * (top - bottom)
        drawn_levels: set[tuple[str, str]] = set()
        for clf in classifiers:
            for d in datasets:
                mine = shown[(shown["classifier"] == clf) & (shown["dataset"] == d)]
                stick = yard[(yard["classifier"] == clf) & (yard["dataset"] == d)]
                for _, r in mine.iterrows():
                    if not np.isfinite(r[measure]):
                        continue
                    y = y_of[r["level"]] + offsets[(clf, d)]
                    drawn_levels.add((clf, r["level"]))
                    if measure == "accuracy_sd" and len(stick):
                        s = stick.iloc[0]
                        if np.isfinite(s[f"{measure}_low"]) and np.isfinite(s[f"{measure}_high"]):
                            ax.add_patch(plt.Rectangle(
                                (s[f"{measure}_low"], y - 0.3 * mark / row),
                                s[f"{measure}_high"] - s[f"{measure}_low"], 0.6 * mark / row,
                                color=BAND_GREY, linewidth=0, zorder=0))
                        ax.plot([s[measure]] * 2, [y - 0.3 * mark / row, y + 0.3 * mark / row],
                                color="#9a9a9a", linewidth=0.8, zorder=0.5)
                        marks.append(_mark(panel, "yardstick", clf, d, r["level"], s,
                                           measure, bottom, top))
                    low, high = r[f"{measure}_low"], r[f"{measure}_high"]
                    hollow = abs(r[measure]) < NO_EFFECT and not (
                        np.isfinite(low) and high - low > NO_EFFECT)
                    ring = (d, clf, measure, r["level"]) in told
                    _point(ax, r[measure], y, low, high, colours[clf], markers[clf], size,
                           hollow=hollow, ring=ring)
                    marks.append(_mark(panel, "point", clf, d, r["level"], r, measure, bottom,
                                       top, hollow=hollow, leader=ring))
            if summary:
                for _, r in study[study["classifier"] == clf].iterrows():
                    if np.isfinite(r[measure]):
                        _point(ax, r[measure], y_of[r["level"]] + offsets[(clf, "mean")],
                               r[f"{measure}_low"], r[f"{measure}_high"], colours[clf], "D",
                               size)
                        marks.append(_mark(panel, "mean over datasets", clf, "", r["level"], r,
                                           measure, bottom, top))
        for level in levels:
            for clf in classifiers:
                if (clf, level) not in drawn_levels:
                    ax.text(bottom + 0.02 * (top - bottom), y_of[level] + offsets[
                        (clf, datasets[0])], f"{clf}: – {_why_missing(source_of[level])}",
                        va="center", ha="left", fontsize=7, color="#555555")
        ax.set_yticks(range(len(levels)), ticks)
        ax.set_ylim(len(levels) - 0.5, -0.5)
        ax.set_xlim(bottom, top)
        for i in range(1, len(levels)):
            ax.axhline(i - 0.5, color="#eeeeee", linewidth=0.6, zorder=0)
        ax.xaxis.set_major_locator(plt.MaxNLocator(4))
        ax.grid(axis="x", alpha=0.3)
        ax.set_title(panel, fontsize=7.5, loc="left")
    handles = [plt.Line2D([], [], marker=markers[c], color=colours[c], markeredgecolor="black",
                          markeredgewidth=0.5, linestyle="none", label=c) for c in classifiers]
    drew = {m["kind"] for m in marks} | {"hollow" for m in marks if m["hollow"]} | {
        "ring" for m in marks if m["leader"]}
    handles += [h for want, h in (
        ("hollow", plt.Line2D([], [], marker="o", markerfacecolor="white", color="black",
                              markeredgewidth=0.6, linestyle="none", markersize=4,
                              label="every run identical")),
        ("ring", plt.Line2D([], [], marker="o", markerfacecolor="none", color=RING,
                            markersize=7, linestyle="none", label="leading source, told apart")),
        ("yardstick", mpl.patches.Patch(color=BAND_GREY,
                                        label="test-set yardstick (accuracy)"))) if want in drew]
    if summary:
        handles.append(plt.Line2D([], [], marker="D", color="#777777", linestyle="none",
                                  markersize=4, label=f"mean of {len(datasets)} datasets"))
    ncol = 3 if side_by_side else 2
    within = f"per classifier top to bottom: {', '.join(datasets)}" + (
        " and their mean" if summary else "") if len(datasets) > 1 else \
        f"top to bottom: {', '.join(classifiers)}"
    key = textwrap.fill(f"in each row, {within}; bars: 95 % intervals over repeats"
                        f"{' (the mean: over datasets)' if summary else ''}",
                        95 if side_by_side else 58)
    fig.legend(handles=handles, loc="lower center", ncol=ncol, frameon=False,
               bbox_to_anchor=(0.5, 0.0), title=key, title_fontsize=7)
    fig.suptitle(title or "Sources of variance, each alone against the control")
    rows_of_legend = math.ceil(len(handles) / ncol) + key.count("\n") + 1
    fig.tight_layout(rect=(0, legend_band(fig, rows_of_legend), 1, 1))
    save_figure(fig, out_paths)
    return pd.DataFrame(marks)


def caption(name: str, sources: pd.DataFrame) -> str:
    """What a headline figure (by its name in :func:`modelvar.findings.figures.findings_figures`)
    draws, over how many datasets and repeats, with which interval: its caption where it is
    shown (the Findings page, the report's first screen)."""
    from modelvar.findings.over_datasets import MIN_DATASETS

    datasets = sources["dataset"].nunique()
    repeats = sources["repeats"].dropna().astype(int) if "repeats" in sources else pd.Series()
    span = "" if repeats.empty else (f", {repeats.min()} repeats each" if repeats.min() ==
                                     repeats.max() else f", {repeats.min()}-{repeats.max()} "
                                     "repeats")
    over = f"{datasets} dataset{'s' if datasets != 1 else ''}{span}"
    if name == "sources_of_variance":
        return (f"Each source alone against the control ({over}), largest effect first. Each "
                "mark is one classifier on one dataset: its mean over repeats with a 95 % "
                "t-interval over repeats; the grey band behind an accuracy mark is that "
                "dataset × classifier's test-set yardstick (the SD of accuracy between "
                "repeats, its interval, a line at its value). Ringed: a leading source told "
                "apart under the page's control; hollow: every run identical."
                + (" Diamonds: each classifier's mean over datasets, t-interval over datasets."
                   if datasets >= MIN_DATASETS else ""))
    if name == "accuracy_vs_reproducibility":
        return (f"Each dataset × classifier ({over}) as one point: its mean run accuracy "
                "against its mean percent agreement between two runs over the factorial "
                "grid; no intervals (a summary of the grid, not a comparison).")
    if name == "classifier_comparison":
        return (f"Each pair of classifiers compared under each source alone ({over}): the "
                "mean difference a − b of the measure, left of 0 where a is the more "
                "reproducible, with its 95 % interval "
                + ("over datasets." if datasets >= MIN_DATASETS else
                   "over repeats, one mark per dataset.")
                + " Ringed: the claim holds under the page's control.")
    if name == "dose_response":
        return (f"Each source against its strength ({over}): the run-to-run SD of accuracy "
                "and the disagreement between two runs, one line per dataset × classifier.")
    raise ValueError(f"no caption for figure {name!r}")


def _point(ax, x, y, low, high, colour, marker, size, *, hollow=False, ring=False):
    """A mark with its interval (none where there is none); hollow where every run was
    identical; ringed where it is a leading source told apart."""
    if np.isfinite(low) and np.isfinite(high) and high > low:
        ax.plot([low, high], [y, y], color="black", linewidth=0.7, zorder=2)
    ax.plot([x], [y], marker=marker, color=colour, markerfacecolor="white" if hollow else colour,
            markeredgecolor="black", markeredgewidth=0.5, markersize=size, linestyle="none",
            zorder=3)
    if ring:
        ax.plot([x], [y], marker="o", markerfacecolor="none", markeredgecolor=RING,
                markeredgewidth=0.8, markersize=size * 1.7, linestyle="none", zorder=4)


def _mark(panel, kind, classifier, dataset, level, row, measure, bottom, top, *,
          hollow=False, leader=False) -> dict:
    return {"panel": panel, "kind": kind, "classifier": classifier, "dataset": dataset,
            "level": level, "value": float(row[measure]), "low": float(row[f"{measure}_low"]),
            "high": float(row[f"{measure}_high"]), "hollow": hollow, "leader": leader,
            "axis_low": bottom, "axis_high": top}


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
#: a shade of grey per pair of classifiers (with its marker): a hue means one classifier in
#: every figure of the set, never a pair
PAIR_COLOURS = ("#1a1a1a", "#6e6e6e", "#a0a0a0")


def comparison_figure(comparison: pd.DataFrame, study: pd.DataFrame,
                      out_paths: list[Path], verdicts: pd.DataFrame | None = None) -> None:
    """Classifiers compared per source (:mod:`modelvar.findings.comparison`): for each measure
    (a panel), one line per source level alone (and all combined), one marker per pair of
    classifiers "a − b" at its mean difference with its 95 % interval: from
    :data:`~modelvar.findings.over_datasets.MIN_DATASETS` datasets its mean over datasets
    (interval over datasets, as the page compares them), else one mark per dataset with its
    interval over repeats (paired within repeats), datasets in the same order in every row;
    left of 0, a is the more reproducible. A comparison whose claim holds under the page's
    control (``verdicts``) is ringed, as in the headline."""
    from modelvar.findings.over_datasets import MIN_DATASETS

    over = comparison["dataset"].nunique() >= MIN_DATASETS
    kind = "classifiers over datasets" if over else "classifiers"
    holding = set() if verdicts is None or verdicts.empty else set(verdicts.loc[
        (verdicts["kind"] == kind) & verdicts["holds"].astype(bool), "row"])
    shown = _as_drawn(study if over else comparison)
    shown = shown[shown["source"] != YARDSTICK]
    levels = _level_order(shown) if len(shown) else []
    pairs = list(dict.fromkeys(zip(shown["classifier_a"], shown["classifier_b"], strict=True)))
    datasets = [None] if over or shown.empty else sorted(shown["dataset"].unique())
    slots = [(pair, d) for pair in pairs for d in datasets]
    step = min(0.8 / max(len(slots), 1), 0.2)
    n_cols = columns_that_fit(2.6, len(COMPARED), margin=1.4)
    n_rows = math.ceil(len(COMPARED) / n_cols)
    ticks = [wrap_label(lv, 0.35) for lv in levels]
    row = max(row_inches(ticks), 0.06 * len(slots) + 0.06)
    fig, axes = plt.subplots(n_rows, n_cols, squeeze=False, sharey=True,
                             figsize=(figure_width(),
                                      0.9 + n_rows * (0.45 + row * max(len(levels), 1))))
    y_of = {level: i for i, level in enumerate(levels)}
    markers = "osD^vPX*"
    rings = False
    for c, (measure, heading) in enumerate(COMPARED.items()):
        ax = axes[c // n_cols][c % n_cols]
        for i, ((a, b), dataset) in enumerate(slots):
            k = pairs.index((a, b))
            part = shown[(shown["classifier_a"] == a) & (shown["classifier_b"] == b)
                         & (shown["measure"] == measure)].dropna(subset=["difference"])
            if dataset is not None:
                part = part[part["dataset"] == dataset]
            ys = part["level"].map(y_of) + (i - (len(slots) - 1) / 2) * step
            low = (part["difference"] - part["difference_low"]).fillna(0).clip(lower=0)
            high = (part["difference_high"] - part["difference"]).fillna(0).clip(lower=0)
            ax.errorbar(part["difference"], ys, xerr=[low, high], fmt=markers[k % 8],
                        color=PAIR_COLOURS[k % len(PAIR_COLOURS)], elinewidth=0.8, capsize=1.5,
                        markersize=4 if len(slots) <= 4 else 3,
                        label=f"{a} − {b}" if dataset in (None, datasets[0]) else None)
            ringed = part.index.isin(list(holding))
            ax.plot(part["difference"][ringed], ys[ringed], marker="o", markerfacecolor="none",
                    markeredgecolor=RING, markeredgewidth=0.8, linestyle="none",
                    markersize=(4 if len(slots) <= 4 else 3) * 1.9, zorder=4)
            rings = rings or bool(ringed.any())
        ax.axvline(0, color="black", linewidth=0.6)
        ax.xaxis.set_major_locator(plt.MaxNLocator(5))
        ax.set_yticks(range(len(levels)), ticks)
        ax.set_ylim(len(levels) - 0.5, -0.5)
        for j in range(1, len(levels)):
            ax.axhline(j - 0.5, color="#eeeeee", linewidth=0.6, zorder=0)
        ax.grid(axis="x", alpha=0.3)
        ax.set_title(heading, loc="left")
    for c in range(len(COMPARED), n_rows * n_cols):
        axes[c // n_cols][c % n_cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if rings:
        handles.append(plt.Line2D([], [], marker="o", markerfacecolor="none", color=RING,
                                  markersize=7, linestyle="none"))
        labels.append("claim holds (page's control)")
    key = "bars: 95 % intervals over datasets" if over else textwrap.fill(
        f"in each row, per pair top to bottom: {', '.join(map(str, datasets))}; bars: 95 % "
        "intervals over repeats", 95 if n_cols > 1 else 58)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 3) or 1,
               frameon=False, bbox_to_anchor=(0.5, 0.0), title=key, title_fontsize=7)
    fig.suptitle("Classifiers compared, each source alone")
    fig.tight_layout(rect=(0, legend_band(fig, math.ceil(max(len(labels), 1) / 3)
                                          + key.count("\n") + 1), 1, 1))
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
