"""A figure per kind of claim the Findings page states (issue 65): each claim's estimate with
its interval against the estimate of no effect, as the kind declares it
(:class:`modelvar.findings.kinds.Drawing`), the claims that hold under the page's control
ringed.

The layout is the headline's (:func:`modelvar.plots.findings.sources_figure`): a panel per
measure, a row per thing compared (the leading source, a variance component, a source against
all combined), and in each row one mark per classifier × dataset in a fixed order, classifier
by colour and marker, each its estimate with its 95 % interval; a vertical line at the
reference; where a kind states practical equivalence, the band of estimates equivalent to the
reference behind each mark. The axis holds every interval, band and the reference: nothing is
cut. A ring means the same as in the headline: a claim the page states under its control.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

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
from modelvar.plots.findings import BAND_GREY, MARK_INCHES, ROW_INCHES, _point

#: the headline's measure names, and the variance components' responses
PANELS = {"accuracy_sd": "run-to-run SD of accuracy", "disagreement":
          "disagreement between two runs", "accuracy": "accuracy", "pa":
          "percent agreement"}
#: a kind in datasets draws one mark per classifier, its statement over datasets
OVER_DATASETS = "over datasets"


def held(verdicts: pd.DataFrame, kind_name: str) -> set:
    """The index labels of the kind's table whose claims hold under the page's control."""
    if verdicts is None or verdicts.empty:
        return set()
    mine = verdicts[(verdicts["kind"] == kind_name) & verdicts["holds"].astype(bool)]
    return set(mine["row"])


def _drawn_rows(kind, table: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """The rows the figure draws: the claims the page judged (every row of the table where
    the drawing says so), with a finite estimate."""
    drawing = kind.drawn
    needed = [drawing.estimate, drawing.low, drawing.high, drawing.panel, drawing.row,
              "classifier"]
    missing = [c for c in needed if c not in table.columns]
    if missing and len(table):
        raise ValueError(f"claim kind {kind.name!r}: its table {kind.table!r} has no column(s) "
                         f"{missing} that its drawing names")
    if missing:  # no claim of this kind on the page: a table without rows or columns
        return pd.DataFrame(columns=needed)
    judged = verdicts[verdicts["kind"] == kind.name]["row"] if verdicts is not None and \
        not verdicts.empty else pd.Series(dtype=int)
    rows = table if drawing.every_row else table.loc[table.index.intersection(judged)]
    return rows[np.isfinite(rows[drawing.estimate].astype(float))]


def _row_order(part: pd.DataFrame, drawing) -> list[str]:
    """A panel's rows, the largest mean estimate first."""
    means = part.groupby(drawing.row)[drawing.estimate].mean()
    return sorted(means.index, key=lambda r: (-means[r], str(r)))


def _limits(part: pd.DataFrame, drawing, bands: list[tuple[float, float]]) -> tuple[float, float]:
    """An axis that holds every estimate, interval end, band end and the reference."""
    ends = [part[drawing.estimate], part[drawing.low], part[drawing.high]]
    values = pd.concat(ends).astype(float).tolist() + [e for b in bands for e in b]
    if drawing.reference is not None:
        values.append(drawing.reference)
    values = np.array([v for v in values if np.isfinite(v)] or [0.0])
    low, high = float(values.min()), float(values.max())
    pad = 0.04 * max(high - low, 1e-9)
    return low - pad, high + pad


def verdict_figure(kind, table: pd.DataFrame, verdicts: pd.DataFrame,
                   out_paths: list[Path]) -> pd.DataFrame:
    """Draw the claims of ``kind`` (a :class:`~modelvar.findings.kinds.ClaimKind` with a
    ``drawn``) from its table and the page's verdicts (module docstring). Returns the drawn
    marks (panel, row, classifier, dataset, estimate, interval ends, band ends, whether the
    claim holds, the panel's axis limits; ``table_row``: its row's label in the kind's
    table); with no claim to draw, a figure that says so."""
    drawing = kind.drawn
    rows = _drawn_rows(kind, table, verdicts)
    holds = held(verdicts, kind.name)
    over = "dataset" not in rows.columns
    datasets = [OVER_DATASETS] if over else list(dict.fromkeys(sorted(rows["dataset"])))
    classifiers = sorted(set(rows["classifier"])) if len(rows) else []
    panels = [p for p in PANELS if p in set(rows[drawing.panel])] + sorted(
        set(rows[drawing.panel]) - set(PANELS))
    slots = [(clf, d) for clf in classifiers for d in datasets]
    mark = min(MARK_INCHES, ROW_INCHES / max(len(slots), 1))
    orders = {p: _row_order(rows[rows[drawing.panel] == p], drawing) for p in panels}
    ticks = {p: [wrap_label(str(r), 0.35) for r in orders[p]] for p in panels}
    row_h = max([row_inches(t) for t in ticks.values()] + [mark * len(slots) + 0.06])
    offsets = {slot: (i - (len(slots) - 1) / 2) * mark / row_h for i, slot in enumerate(slots)}
    size = min(4.5, 72 * mark * 0.9)
    colours, markers = classifier_colours(classifiers), classifier_markers(classifiers)
    n_cols = columns_that_fit(1.9, max(len(panels), 1), margin=1.5)
    n_rows = max(math.ceil(len(panels) / n_cols), 1)
    tallest = [max((len(orders[p]) for p in panels[r * n_cols:(r + 1) * n_cols]), default=1)
               for r in range(n_rows)]
    fig, axes = plt.subplots(n_rows, n_cols, squeeze=False, figsize=(
        figure_width(), 1.0 + sum(row_h * t + 0.5 for t in tallest)),
        gridspec_kw={"height_ratios": tallest})
    marks = []
    for k, panel in enumerate(panels):
        ax = axes.flat[k]
        part = rows[rows[drawing.panel] == panel]
        bands = {i: drawing.band(r) for i, r in part.iterrows()} if drawing.band else {}
        bottom, top = _limits(part, drawing, list(bands.values()))
        y_of = {r: i for i, r in enumerate(orders[panel])}
        for i, r in part.iterrows():
            slot = (r["classifier"], OVER_DATASETS if over else r["dataset"])
            y = y_of[r[drawing.row]] + offsets[slot]
            low, high = float(r[drawing.low]), float(r[drawing.high])
            if i in bands and all(np.isfinite(bands[i])):
                ax.add_patch(plt.Rectangle((bands[i][0], y - 0.3 * mark / row_h),
                                           bands[i][1] - bands[i][0], 0.6 * mark / row_h,
                                           color=BAND_GREY, linewidth=0, zorder=0))
            ring = i in holds
            _point(ax, float(r[drawing.estimate]), y, low, high, colours[r["classifier"]],
                   markers[r["classifier"]], size, ring=ring)
            marks.append({"table_row": i, "panel": PANELS.get(panel, panel),
                          "row": r[drawing.row],
                          "classifier": r["classifier"], "dataset": slot[1],
                          "estimate": float(r[drawing.estimate]), "low": low, "high": high,
                          "band_low": bands.get(i, (np.nan, np.nan))[0],
                          "band_high": bands.get(i, (np.nan, np.nan))[1], "holds": ring,
                          "axis_low": bottom, "axis_high": top})
        if drawing.reference is not None:
            ax.axvline(drawing.reference, color="black", linewidth=0.6, zorder=1)
        ax.set_yticks(range(len(orders[panel])), ticks[panel])
        ax.set_ylim(len(orders[panel]) - 0.5, -0.5)
        ax.set_xlim(bottom, top)
        for j in range(1, len(orders[panel])):
            ax.axhline(j - 0.5, color="#eeeeee", linewidth=0.6, zorder=0)
        ax.xaxis.set_major_locator(plt.MaxNLocator(4))
        ax.grid(axis="x", alpha=0.3)
        ax.set_title(PANELS.get(panel, panel), loc="left")
        ax.set_xlabel(drawing.axis)
    for k in range(len(panels), n_rows * n_cols):
        axes.flat[k].axis("off")
    if not panels:
        axes.flat[0].text(0.5, 0.5, f"no {kind.title} on this page", ha="center",
                          va="center", transform=axes.flat[0].transAxes)
    handles = [plt.Line2D([], [], marker=markers[c], color=colours[c], markeredgecolor="black",
                          markeredgewidth=0.5, linestyle="none", label=c) for c in classifiers]
    if any(m["holds"] for m in marks):
        handles.append(plt.Line2D([], [], marker="o", markerfacecolor="none", color="black",
                                  markersize=7, linestyle="none",
                                  label="claim holds (page's control)"))
    if any(np.isfinite(m["band_low"]) for m in marks):
        handles.append(mpl.patches.Patch(color=BAND_GREY, label="practically equivalent"))
    wide = n_cols > 1
    within = f"per classifier top to bottom: {', '.join(datasets)}" if not over and \
        len(datasets) > 1 else "one mark per classifier"
    key = textwrap.fill(f"in each row, {within}; bars: {drawing.interval}", 95 if wide else 58)
    ncol = 3 if wide else 2
    fig.legend(handles=handles, loc="lower center", ncol=ncol, frameon=False,
               bbox_to_anchor=(0.5, 0.0), title=key, title_fontsize=7)
    fig.suptitle(kind.title[0].upper() + kind.title[1:])
    legend_rows = math.ceil(len(handles) / ncol) + key.count("\n") + 1
    fig.tight_layout(rect=(0, legend_band(fig, legend_rows), 1, 1))
    save_figure(fig, out_paths)
    return pd.DataFrame(marks, columns=["table_row", "panel", "row", "classifier", "dataset",
                                        "estimate", "low", "high", "band_low", "band_high",
                                        "holds", "axis_low", "axis_high"])


def verdict_caption(kind, table: pd.DataFrame, verdicts: pd.DataFrame) -> str:
    """What a kind's figure draws, over how many datasets and repeats, with which interval:
    its caption where it is shown."""
    drawing = kind.drawn
    rows = _drawn_rows(kind, table, verdicts)
    if "dataset" in rows.columns:
        repeats = rows["repeats"].dropna().astype(int) if "repeats" in rows else pd.Series()
        over = f"{rows['dataset'].nunique()} datasets" + (
            "" if repeats.empty else f", {repeats.min()}-{repeats.max()} repeats"
            if repeats.min() != repeats.max() else f", {repeats.min()} repeats each")
    else:
        over = f"over {int(rows['datasets'].max()) if len(rows) else 0} datasets"
    reference = "" if drawing.reference is None else \
        f" The vertical line is {drawing.reference:g}, no difference."
    band = " The grey band behind a mark is where its estimate would be practically " \
        "equivalent to no difference (the ratio within the page's equivalence margin)." \
        if drawing.band else ""
    return (f"{kind.title[0].upper() + kind.title[1:]} ({over}): each mark is one "
            f"classifier{'' if 'dataset' not in rows.columns else ' on one dataset'}, "
            f"{drawing.axis} with its {drawing.interval}.{reference}{band} Ringed: the claim "
            "holds under the page's control.")
