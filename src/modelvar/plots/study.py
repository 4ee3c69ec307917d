"""The figure set of one dataset (seaborn), in the report's reading order.

Every figure says what it shows and what each mark pools: its title names the panels' families,
and where a violin or a point pools several levels of a family that varies in the grid, a line
under the title lists them with the number of values per mark. Cells carry readable labels
(``data rel 0.2 · hparam none · 50 % train · seed per run``, :func:`modelvar.study.cells.
cell_label`), metrics their names, classifiers one fixed colour and marker each. Figures are
drawn at the figure set's width (:func:`modelvar.plots.common.figure_width`: a journal's single or
double column), panels wrapping where they do not fit, and no panel holds more than
:data:`MAX_PER_PANEL` violins or rows. A distribution of fewer than
:data:`MIN_VALUES_FOR_DENSITY` *distinct* values is drawn as its values (a strip), not as a
density that would invent its shape (50 runs of a small test set's accuracy take 4-5 distinct
values); violins never pool training fractions (they split by them, in shades of grey: colour
means a classifier).

Each figure takes the dataset's tables and ``roles`` (classifier → cell → its parts of the
design, :meth:`modelvar.study.design.DatasetDesign.roles`, as the plan fitted them): the seed's
figures (gross accuracy grid, accuracy
by data perturbation, repeat accuracy ranges, EC distributions, per-sample instability) show the
**factorial** cells, where every family's levels are crossed; the sources figures show the
**one-at-a-time** cells (the control and each source alone).
"""

from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path

import matplotlib as mpl
import matplotlib.collections
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.ticker import MaxNLocator

from modelvar.plots.common import (
    classifier_colours,
    classifier_markers,
    columns_that_fit,
    figure_width,
    legend_band,
    metric_name,
    save_figure,
    wrap_label,
)
from modelvar.study import families
from modelvar.study.cells import cell_label, level_value

MAX_PER_PANEL = 20
#: a group of fewer values is drawn as its values, not as a density
MIN_VALUES_FOR_DENSITY = 30
#: accuracy_by_source's two views of a run's accuracy: as measured (seed 004's gross view,
#: the test sets' spread between repeats in it), and within its repeat
GROSS, WITHIN = "as measured", "− its repeat's control"
#: the facet of a figure's views (its levels name themselves)
VIEW = "view"


# ----------------------------------------------------------------------------- helpers
#: classifier → cell id → its parts of the design (the dataset's design file)
Roles = dict[str, dict[str, tuple[str, ...]]]


def cells_of(frame: pd.DataFrame, roles: Roles, role: str) -> pd.DataFrame:
    """The rows of each classifier's cells in one part of its design (``factorial``,
    ``one-at-a-time``): a classifier whose model seed collapsed has its own cells."""
    keep = {(clf, c) for clf, cells in roles.items() for c, r in cells.items() if role in r}
    pairs = zip(frame["classifier"].astype(str), frame["cell"].astype(str), strict=True)
    return frame[[pair in keep for pair in pairs]]


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
    """A one-line title above the panels; what the marks pool between them, in the smallest
    print size (both above the figure's area, which the saved file's tight box includes)."""
    lines = textwrap.wrap(note, int(fig.get_figwidth() * 15)) if note else []
    if lines:
        fig.text(0.5, 1.0, "\n".join(lines), ha="center", va="bottom", fontsize=7,
                 color="#444444", transform=fig.transFigure)
    gap = (len(lines) * 8.5 + 1) / 72 / fig.get_figheight()
    fig.suptitle(title, y=1.0 + gap, va="bottom", fontsize=8.5)


def _palette(classifiers) -> dict[str, str]:
    return classifier_colours(classifiers)


#: the colours of a split family's levels (training fractions), light to dark: greys, since a
#: hue means a classifier in every figure of the set
SPLIT_COLOURS = ("#bdbdbd", "#878787", "#525252", "#1a1a1a")


def _split(data: pd.DataFrame, shown: list[str]) -> str | None:
    """The training fraction, where it varies and no row, column or position shows it: violins
    are split by it (one per fraction), never pooled across it."""
    return "downsample" if "downsample" not in shown and data["downsample"].nunique() > 1 \
        else None


def _axis_per_panel(grid, data: pd.DataFrame, value: str, horizontal: bool, *,
                    row: str | None, col: str | None) -> None:
    """Every panel gets the value axis of its own values (5 % room either side): a measure of
    a narrow range, or a classifier whose values are a fraction of another's, is never drawn
    flat on another panel's scale."""
    names = [f for f in (row, col) if f]
    for key, ax in grid.axes_dict.items():
        keys = key if isinstance(key, tuple) else (key,)
        mine = np.logical_and.reduce([data[name] == level for name, level in
                                      zip(names, keys, strict=True)])
        values = data.loc[mine, value].astype(float)
        values = values[np.isfinite(values)]
        if values.empty:
            continue
        low, high = float(values.min()), float(values.max())
        room = 0.05 * (high - low) or 0.01 * max(abs(high), 1e-3)
        (ax.set_xlim if horizontal else ax.set_ylim)(low - room, high + room)


#: half the width, in categories, over which a strip's dots spread (split among dodged hues)
STRIP_JITTER = 0.2


def _jitter_strips(grid, name: str, *, horizontal: bool, limit: float) -> None:
    """Spread each strip's dots across its category by offsets uniform in ±``limit``, drawn
    from the stream ``strip-jitter/NAME/DIGEST`` of the strip's own positions: a dot's place
    depends on what is drawn, never on the order the strips are drawn in. (seaborn jitters
    with numpy's global generator, unseeded, and walks a grid's row and column facets in a
    set's order, which changes with the process's string hashing: the same figure came out
    differently each time.) A single dot stays on its category, as seaborn leaves it."""
    import hashlib

    from modelvar.seeding import stream

    along = 1 if horizontal else 0
    for ax in grid.axes.flat:
        for collection in ax.collections:
            if not isinstance(collection, mpl.collections.PathCollection):
                continue
            offsets = np.array(collection.get_offsets(), dtype=float)
            if len(offsets) < 2:
                continue
            digest = hashlib.blake2b(offsets.tobytes(), digest_size=8).hexdigest()
            rng = stream(0, f"strip-jitter/{name}/{digest}").generator()
            offsets[:, along] += rng.uniform(-limit, limit, len(offsets))
            collection.set_offsets(offsets)


def _violin_grid(data: pd.DataFrame, *, x: str, y: str, row: str | None, col: str | None,
                 xlabel: str, ylabel: str, title: str, note: str, horizontal: bool = False,
                 order: list[str] | None = None, hue: str = "classifier",
                 axis_per: str | None = None):
    """Distributions of y by x, faceted by row/col, panels sized to the figure width (columns
    wrap where there is no row facet): violins, or the values themselves where a group holds
    fewer than :data:`MIN_VALUES_FOR_DENSITY`. Coloured by classifier (its colour), or by the
    levels of ``hue`` (a family that would be pooled, :func:`_split`; rows then name the
    classifier). ``axis_per``: the facet (``row`` or ``col``'s column) whose levels are
    measures of different ranges: then every panel has its own value axis, sized by its
    values, so that no measure (nor a classifier's narrower values) is drawn flat on another
    panel's scale."""
    rows = _order(data, row) if row else [None]
    cols = _order(data, col) if col else [None]
    cat = y if horizontal else x
    if order is None:
        order = _order(data, cat) if cat != "classifier" else sorted(data["classifier"].unique())
    width = figure_width()
    n_cols, wrap = len(cols), None
    if row is None and col and n_cols > max(1, int((width - 0.6) // 1.4)):
        wrap = max(1, int((width - 0.6) // 1.4))
    per_row = wrap or n_cols
    # the row titles beside the last column and the saved image's margin take ~0.35 in
    panel_w = max(1.2, min(3.0, (width - 0.35) / per_row))
    panel_h = 0.22 * len(order) + 0.8 if horizontal else 1.9
    kw = {"row": row, "row_order": rows} if row else {}
    if col:
        kw.update(col=col, col_order=cols, col_wrap=wrap)
    if hue == "classifier":
        hue_order = sorted(data["classifier"].unique())
        palette = _palette(hue_order)
    else:
        hue_order = _order(data, hue)
        picks = np.linspace(0, len(SPLIT_COLOURS) - 1, len(hue_order)).round().astype(int)
        palette = dict(zip(hue_order, [SPLIT_COLOURS[i] for i in picks], strict=True))
    groups = list(dict.fromkeys(c for c in (cat, hue, row, col) if c))
    # a density needs enough distinct values, not rows: many runs may share a few accuracies
    smallest = int(data.groupby(groups, observed=True)[y if not horizontal else x].nunique()
                   .min())
    if smallest < MIN_VALUES_FOR_DENSITY:
        drawn = {"kind": "strip", "dodge": len(hue_order) > 1 and cat != hue,
                 "jitter": False, "size": 2.6, "alpha": 0.8, "linewidth": 0}
        note = (f"{note}; " if note else "").replace("per violin", "a group").replace(
            "a violin", "a group").replace("each violin", "each group") + (
            f"each dot one value (as few as {smallest} distinct values a group: no density "
            "drawn)")
    else:
        drawn = {"kind": "violin", "cut": 0, "inner": "quart", "density_norm": "width",
                 "linewidth": 0.5}
    grid = sns.catplot(data=data, x=x, y=y, hue=hue, order=order,
                       hue_order=hue_order, palette=palette, height=panel_h,
                       aspect=panel_w / panel_h, margin_titles=True, legend_out=True,
                       sharex=not (axis_per and horizontal),
                       sharey=not (axis_per and not horizontal),
                       **drawn, **kw)
    if drawn["kind"] == "strip":
        _jitter_strips(grid, title, horizontal=horizontal,
                       limit=STRIP_JITTER / (len(hue_order) if drawn["dodge"] else 1))
    if drawn["kind"] == "violin":  # each density says the fewest distinct values drawn from
        for ax in grid.axes.flat:
            for collection in ax.collections:
                if isinstance(collection, mpl.collections.PolyCollection):
                    collection.set_gid(f"distinct={smallest}")
    if axis_per is not None:
        _axis_per_panel(grid, data, x if horizontal else y, horizontal, row=row, col=col)
    grid.set_axis_labels(xlabel, ylabel)
    if panel_w < 1.6:  # narrow panels: the shared axis label once, not run together
        bottom = [ax for ax in grid.axes.flat if ax.get_xlabel()]
        for ax in bottom[1:]:
            ax.set_xlabel("")
    # a classifier's name needs no "classifier:" before it (its colour says it too), and a
    # narrow panel has no room for it
    col_name = "{col_name}" if col == "classifier" else f"{_facet_title(col)}: {{col_name}}"
    grid.set_titles(row_template="{row_name}" if row == VIEW else
                    f"{_facet_title(row)}: {{row_name}}" if row else "",
                    col_template=col_name if col else "")
    for ax in grid.axes.flat:
        ax.grid(axis="x" if horizontal else "y", alpha=0.3)
        ax.tick_params(labelsize=7)
        ax.title.set_fontsize(7)
        if not horizontal:
            ax.tick_params(axis="x", labelrotation=30)
    for ax in grid.axes.flat:  # the margin titles of the rows
        for text in ax.texts:
            text.set_fontsize(7)
    if grid.legend is not None:  # under the panels: a legend beside them widens the figure
        sns.move_legend(grid, "lower center", bbox_to_anchor=(0.5, 0.0),
                        ncol=min(len(hue_order), 4), frameon=False,
                        title="" if hue == "classifier" else _facet_title(hue), fontsize=7,
                        title_fontsize=7)
        # a fixed band in inches: the panels' tick labels and axis label (~0.6 in), then the
        # legend with its title (~0.4 in)
        grid.figure.subplots_adjust(bottom=min(1.0 / grid.figure.get_figheight(), 0.4))
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
                        roles: Roles, dataset: str, out_paths: list[Path]) -> None:
    """Each source alone against the control: within-repeat accuracy SD and disagreement, means
    over repeats with 95 % intervals (:mod:`modelvar.findings.sources`)."""
    from modelvar.findings.sources import sources_of_variance as table
    from modelvar.plots.findings import sources_figure

    sources = table(summary, agreement, runs,
                    {(dataset, clf): cells for clf, cells in roles.items()})
    if sources.empty:
        raise ValueError(f"{dataset}: no one-at-a-time cells to draw")
    sources_figure(sources, out_paths, title=f"{dataset}: each source alone")


def within_repeat(data: pd.DataFrame, control: str) -> pd.Series:
    """Each run's accuracy minus the mean accuracy of its repeat's control runs (same
    classifier): the effect within a repeat, whose runs share its test set and training pool
    (NaN where the repeat has no control run)."""
    base = data[data["cell"].astype(str) == control].groupby(
        ["classifier", "repeat"], observed=True)["accuracy"].mean()
    keys = pd.MultiIndex.from_arrays([data["classifier"], data["repeat"]])
    return data["accuracy"] - base.reindex(keys).to_numpy()


def accuracy_by_source(runs: pd.DataFrame, roles: Roles, dataset: str,
                       out_paths: list[Path]) -> None:
    """Run accuracies of the control and of each source alone, one column of panels per
    classifier, in two views (one row each, each panel its own axis): every run's accuracy
    as measured (seed 004's view: the spread between the repeats' test sets is in it), and
    every run minus its repeat's control (:func:`within_repeat`: the source's effect within
    a repeat, where the runs share a test set)."""
    data = cells_of(runs, roles, "one-at-a-time").copy()
    if data.empty:
        raise ValueError(f"{dataset}: no one-at-a-time cells to draw")
    ordered = source_order(data["cell"].unique())
    labels = dict(ordered)
    data["source"] = [labels[str(c)] for c in data["cell"]]
    order = [label for _, label in ordered]
    per = data.groupby(["classifier", "source"]).size()
    repeats = data["repeat"].nunique()
    control = next((c for c, label in ordered if label == "control"), None)
    views = [data.assign(**{VIEW: GROSS, "value": data["accuracy"]})]
    if control is not None:
        views.append(data.assign(**{VIEW: WITHIN, "value": within_repeat(data, control)}))
    both = pd.concat(views, ignore_index=True).dropna(subset=["value"])
    fig = _violin_grid(
        both, x="value", y="source", order=order, row=VIEW, col="classifier",
        xlabel="run accuracy", ylabel="", horizontal=True, axis_per=VIEW,
        title=f"{dataset}: run accuracy, each source alone",
        note=f"each violin: every run of one cell, {repeats} repeats × "
             f"{int(per.max() / repeats)} runs = {int(per.max())} runs (test sets differ "
             "between repeats; the lower row takes each repeat's control out)")
    save_figure(fig, out_paths)


def reproducibility_vs_chance(summary: pd.DataFrame, roles: Roles, dataset: str,
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
    n_cols = columns_that_fit(1.7, len(classifiers), margin=1.3)
    n_rows = math.ceil(len(classifiers) / n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, squeeze=False, sharey=True, sharex=True,
                             figsize=(figure_width() if n_cols > 1 else min(figure_width(), 4.0),
                                      0.8 + n_rows * (0.6 + 0.17 * len(levels))))
    colours, markers = _palette(classifiers), classifier_markers(classifiers)
    for i, clf in enumerate(classifiers):
        ax = axes[i // n_cols][i % n_cols]
        part = points[points["classifier"] == clf].set_index("source").reindex(levels)
        y = np.arange(len(levels))
        ax.errorbar(part["mean"], y, xerr=[(part["mean"] - part["low"]).clip(lower=0).fillna(0),
                                           (part["high"] - part["mean"]).clip(lower=0).fillna(0)],
                    fmt=markers[clf], color=colours[clf], ecolor="black", capsize=1.5,
                    elinewidth=0.8, markersize=4, label="global EC (mean, 95 % CI)")
        ax.scatter(part["null"], y, marker="D", s=12, facecolor="none", edgecolor="#555555",
                   linewidths=0.6, label="if runs erred independently")
        ax.set_yticks(y, levels)
        ax.set_ylim(len(levels) - 0.5, -0.5)
        ax.set_title(clf, color=colours[clf], loc="left")
        ax.set_xlabel("global EC")
        ax.grid(axis="x", alpha=0.3)
    for i in range(len(classifiers), n_rows * n_cols):
        axes[i // n_cols][i % n_cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2 if n_cols > 1 else 1,
               frameon=False, bbox_to_anchor=(0.5, 0.0))
    _title(fig, f"{dataset}: global EC against chance")
    fig.tight_layout(rect=(0, legend_band(fig, 1 if n_cols > 1 else 2), 1, 1))
    save_figure(fig, out_paths)


# ----------------------------------------------------------------------------- the seed's figures
def gross_accuracy_grid(runs: pd.DataFrame, roles: Roles, dataset: str,
                        out_paths: list[Path]) -> None:
    """Every run's accuracy (seed 004): rows data, columns hparam perturbation; x the training
    fraction where it varies (violins never pool fractions), else the classifier."""
    grid = cells_of(runs, roles, "factorial")
    data = _labelled(grid)
    x = "downsample" if data["downsample"].nunique() > 1 else "classifier"
    shown = ["data", "hparam", x]
    n = data.groupby(["classifier", *dict.fromkeys(shown)], observed=True).size().max()
    fig = _violin_grid(data, x=x, y="accuracy",
                       row="data" if data["data"].nunique() > 1 else None,
                       col="hparam" if data["hparam"].nunique() > 1 else None,
                       xlabel="training fraction" if x == "downsample" else "",
                       ylabel="run accuracy", title=f"{dataset}: gross accuracies",
                       note=pooling_note(grid, shown, f"{n} runs a violin"))
    save_figure(fig, out_paths)


def _violins_by_data(data: pd.DataFrame, grid: pd.DataFrame, *, y: str, facet: str,
                     facet_label: str, ylabel: str, title: str, unit: str):
    """Violins of ``y`` by data perturbation level, one row per classifier and one column per
    level of ``facet`` (when it varies); the note says what else each violin pools."""
    col = facet if data[facet].nunique() > 1 else None
    split = _split(data, ["data", facet])
    keys = ["classifier", "data", *([col] if col else []), *([split] if split else [])]
    n = data.groupby(keys, observed=True).size().max()
    return _violin_grid(data, x="data", y=y, row="classifier", col=col,
                        xlabel="data perturbation", ylabel=ylabel, title=title,
                        hue=split or "classifier",
                        note=pooling_note(grid, ["data", facet, *([split] if split else [])],
                                          f"{n} {unit} per violin"))


def accuracy_by_data_perturbation(runs: pd.DataFrame, roles: Roles, dataset: str,
                                  out_paths: list[Path]) -> None:
    """Run accuracies by data perturbation level (seed 004, "ignoring hparam perturbation"),
    one row per classifier, columns training fraction."""
    grid = cells_of(runs, roles, "factorial")
    fig = _violins_by_data(_labelled(grid), grid, y="accuracy", facet="downsample",
                           facet_label="training fraction", ylabel="run accuracy",
                           title=f"{dataset}: accuracy by data perturbation", unit="runs")
    save_figure(fig, out_paths)


def repeat_accuracy_ranges(summary: pd.DataFrame, roles: Roles, dataset: str,
                           out_paths: list[Path]) -> None:
    """Per repeat: max − min of its runs' accuracies, shown over repeats (seed 004)."""
    grid = cells_of(summary, roles, "factorial")
    grid = grid[(grid["metric"] == "accuracy") & (grid["subset"] == "all")]
    fig = _violins_by_data(_labelled(grid), grid, y="range", facet="hparam",
                           facet_label="hparam perturbation", ylabel="accuracy range in a repeat",
                           title=f"{dataset}: accuracy range within a repeat",
                           unit="repeat ranges")
    save_figure(fig, out_paths)


def ec_distributions(summary: pd.DataFrame, roles: Roles, dataset: str,
                     out_paths: list[Path]) -> None:
    """Per-repeat mean global and local EC (and accuracy-normalised forms), over repeats."""
    grid = cells_of(summary, roles, "factorial")
    grid = grid[(grid["subset"] == "all") & grid["metric"].isin(
        ["ec_global", "ec_local", "ec_global_accnorm_sqrt", "ec_local_accnorm_sqrt"])]
    data = _labelled(grid)
    short = {"ec_global": "1 global EC", "ec_global_accnorm_sqrt": "2 global EC, acc.-norm.",
             "ec_local": "3 local EC", "ec_local_accnorm_sqrt": "4 local EC, acc.-norm."}
    data["metric"] = data["metric"].map(short)
    split = _split(data, ["data"])
    keys = ["classifier", "data", "metric", *([split] if split else [])]
    n = data.groupby(keys, observed=True).size().max()
    # the four metrics side by side where they fit, else one above the other
    wide = figure_width() - 0.8 >= 4 * 1.2 or data["classifier"].nunique() > 2
    row, col = ("classifier", "metric") if wide else ("metric", "classifier")
    fig = _violin_grid(data, x="data", y="mean", row=row, col=col,
                       xlabel="data perturbation", ylabel="repeat mean",
                       title=f"{dataset}: error consistency, repeat means",
                       hue=split or "classifier", axis_per="metric",
                       note=pooling_note(grid, ["data", *([split] if split else [])],
                                         f"{n} repeat means per violin"))
    for ax in np.ravel(fig.axes):
        ax.set_title(re.sub(r"metric: \d ", "", ax.get_title()), fontsize=7)
        for text in ax.texts:  # the margin titles of the rows
            text.set_text(re.sub(r"metric: \d ", "", text.get_text()))
    save_figure(fig, out_paths)


def per_sample_instability(agreement: pd.DataFrame, roles: Roles, dataset: str,
                           out_paths: list[Path]) -> None:
    """Per repeat: the share of test samples some run predicts differently, over repeats."""
    grid = cells_of(agreement, roles, "factorial")
    fig = _violins_by_data(_labelled(grid), grid, y="unstable_frac", facet="downsample",
                           facet_label="training fraction", ylabel="unstable share",
                           title=f"{dataset}: unstable test samples", unit="repeats")
    save_figure(fig, out_paths)


#: a row of the factorial figures, inches (one line of 7 pt text; the design matrix's dots)
CELL_ROW_INCHES = 0.105


def _reference_cell(cells: list[str]) -> str:
    """The cell the others are read against: every family at its none (the grid's control),
    else the first in order."""
    from modelvar.study.cells import Cell

    def control(cell: str) -> bool:
        return all(level == families.family(name).none_id
                   for name, level in Cell.parse(cell).levels().items())

    return next((c for c in cells if control(c)), cells[0])


def _matrix_key(cell_id: str, fams) -> tuple:
    """A design matrix's order: per family in the registry's order, its none first, then
    its levels in order (the control is the first row)."""
    from modelvar.study.cells import Cell

    levels = Cell.parse(cell_id).levels()
    return tuple((levels[f] != families.family(f).none_id, _level_key(level_value(levels[f])))
                 for f in fams)


def _matrix_columns(cells: list[str], fams: list[str]) -> list[tuple[str, list[str], bool, str]]:
    """Per family that varies: its level id in each cell, whether it has two levels (its
    none and one other: drawn as dots) and the column's header (that other level, or the
    family's title)."""
    from modelvar.study.cells import Cell

    out = []
    for name in fams:
        family = families.family(name)
        ids = [Cell.parse(c).levels()[name] for c in cells]
        levels = sorted(set(ids), key=lambda v: _level_key(level_value(v)))
        two = len(levels) == 2 and family.none_id in levels
        on = next((v for v in levels if v != family.none_id), levels[-1])
        out.append((name, ids, two, family.level_label(on) if two else family.title))
    return out


def _design_matrix(ax, columns) -> None:
    """The factorial cells as rows of a design matrix (:func:`_matrix_columns`): a filled
    dot where the cell has the column's perturbation, a grey one where not; a family of more
    levels has each cell's level in words ("·" for none)."""
    for j, (name, ids, two, header) in enumerate(columns):
        family = families.family(name)
        for i, level in enumerate(ids):
            if two:
                ax.plot([j], [i], marker="o", markersize=3.2, linestyle="none",
                        color="black" if level != family.none_id else "#d0d0d0")
            else:
                ax.text(j, i, "·" if level == family.none_id else family.words(level),
                        ha="center", va="center", fontsize=7)
        ax.text(j, -0.9, header, rotation=90, ha="center", va="bottom", fontsize=7)
    ax.set_xlim(-0.6, len(columns) - 0.4)
    ax.axis("off")


def reproducibility_by_cell(summary: pd.DataFrame, roles: Roles, dataset: str,
                            out_paths: list[Path], stat: str = "mean",
                            metrics=("accuracy", "ec_global", "ec_local", "pa")
                            ) -> pd.DataFrame:
    """Every factorial cell, one row each as a design matrix (a column per family that
    varies), a panel per metric (its own axis, shared by every cell), one mark per
    classifier. ``stat="mean"`` (the repeats' mean over runs or run pairs): each cell's
    difference from the grid's control, paired within repeats — per repeat the cell minus
    the control of that repeat (they share its test set and training pool), mean over
    repeats with a 95 % t-interval, a line at 0: the within-repeat effect, not hidden in the
    test sets' spread. ``stat="range"`` (seed 004's range among a repeat's run pairs, a
    within-repeat quantity): its mean over repeats with a 95 % t-interval. Returns the drawn
    points (classifier, metric, cell, mean, interval ends, repeats)."""
    from modelvar.findings.sources import mean_ci

    grid = cells_of(summary, roles, "factorial")
    grid = grid[(grid["subset"] == "all") & grid["metric"].isin(metrics)]
    if grid.empty:
        raise ValueError(f"{dataset}: no factorial cells to draw")
    fams = varying(grid) or [families.names()[0]]
    cells = sorted({str(c) for c in grid["cell"]}, key=lambda c: _matrix_key(c, fams))
    reference = _reference_cell(cells)
    paired = stat == "mean"
    values = grid.pivot_table(index=["classifier", "metric", "repeat"], columns="cell",
                              values=stat, aggfunc="first", observed=True)
    values.columns = values.columns.astype(str)
    rows = []
    for (clf, metric), part in values.groupby(level=["classifier", "metric"]):
        for cell in cells:
            if cell not in part:
                continue
            v = part[cell] - part[reference] if paired else part[cell]
            mean, low, high = mean_ci(v, None if paired else (0, 1))
            rows.append({"classifier": clf, "metric": metric, "cell": cell, "mean": mean,
                         "low": low, "high": high, "repeats": int(v.notna().sum())})
    points = pd.DataFrame(rows)
    classifiers = sorted(points["classifier"].unique())
    metric_list = [m for m in metrics if m in set(points["metric"])]
    # laid out in inches: the matrix (a column per family), then a panel per metric
    # the saved image adds a 0.1 in margin each side: the panels' tick labels stay inside
    side, gap, column = 0.15, 0.24, 0.15
    matrix_w = column * len(fams) + 0.05
    panel_w = (figure_width() - 2 * side - matrix_w - gap * len(metric_list)) / len(
        metric_list)
    narrow = panel_w < 1.0
    columns = _matrix_columns(cells, fams)
    # the matrix's headers stand above it, rotated: ~0.055 in a character at 7 pt
    top = max(0.055 * max(len(c[3]) for c in columns), 0.45) + 0.1
    bottom = 1.0 if narrow else 0.8
    height = CELL_ROW_INCHES * len(cells) + top + bottom
    fig, axes = plt.subplots(1, len(metric_list) + 1, squeeze=False, sharey=True,
                             figsize=(figure_width(), height),
                             gridspec_kw={"width_ratios": [matrix_w] + [panel_w] *
                                          len(metric_list)})
    average = (matrix_w + panel_w * len(metric_list)) / (len(metric_list) + 1)
    fig.subplots_adjust(left=side / figure_width(), right=1 - side / figure_width(),
                        top=1 - top / height, bottom=bottom / height, wspace=gap / average)
    axes = axes[0]
    _design_matrix(axes[0], columns)
    offsets = np.linspace(-0.2, 0.2, len(classifiers)) if len(classifiers) > 1 else [0.0]
    colours, markers = _palette(classifiers), classifier_markers(classifiers)
    y_of = {cell: i for i, cell in enumerate(cells)}
    for ax, metric in zip(axes[1:], metric_list, strict=True):
        for off, clf in zip(offsets, classifiers, strict=True):
            p = points[(points["metric"] == metric) & (points["classifier"] == clf)]
            y = p["cell"].map(y_of) + off
            ax.errorbar(p["mean"], y, xerr=[(p["mean"] - p["low"]).clip(lower=0).fillna(0),
                                            (p["high"] - p["mean"]).clip(lower=0).fillna(0)],
                        fmt=markers[clf], markersize=2.6, capsize=0, elinewidth=0.6,
                        color=colours[clf], label=clf)
        if paired:
            ax.axvline(0, color="black", linewidth=0.6, zorder=0)
        ax.set_ylim(len(cells) - 0.5, -0.5)
        ax.grid(axis="x", alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(2 if narrow else 4))
        ax.tick_params(axis="y", left=False, labelleft=False)
        ax.tick_params(axis="x", labelrotation=90 if narrow else 0)
        name = metric_name(metric)
        ax.set_title(wrap_label(name, max(panel_w / figure_width(), 0.2)), fontsize=7)
    # under every panel once, between their tick labels and the legend
    fig.text(0.5, 0.3 / height, "cell − control, paired within repeats" if paired else
             "range within a repeat", ha="center", va="bottom", fontsize=7.5)
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(classifiers), frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    repeats = int(points["repeats"].max()) if len(points) else 0
    note = ("each row one cell of the factorial grid (a dot: that perturbation on); "
            + (f"each mark the cell's difference from the control in the same repeat, mean "
               f"over {repeats} repeats with a 95 % t-interval" if paired else
               f"each mark the range among a repeat's run pairs, mean over {repeats} "
               "repeats with a 95 % t-interval"))
    _title(fig, f"{dataset}: every cell against the control" if paired else
           f"{dataset}: ranges within a repeat, every cell", note)
    save_figure(fig, out_paths)
    return points


def repeat_ec_ranges(summary: pd.DataFrame, roles: Roles, dataset: str,
                     out_paths: list[Path]) -> None:
    """Per repeat: the range of the pairwise global and local EC among its run pairs (seed
    004's "Repeat EC Ranges"), as the mean over repeats with a 95 % interval per cell."""
    reproducibility_by_cell(summary, roles, dataset, out_paths, stat="range",
                            metrics=("ec_global", "ec_local"))


def group_disparities(disparities: pd.DataFrame, roles: Roles, dataset: str,
                      out_paths: list[Path]) -> pd.DataFrame:
    """Largest difference between groups (max − min) of accuracy and per-repeat
    reproducibility, for the control and each source alone: the mean over repeats (accuracy:
    of each repeat's runs' mean, the runs sharing its test set) with a 95 % interval over
    repeats; one panel per grouping and metric, each classifier its colour and marker.
    Returns the drawn points and their intervals."""
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
        # the runs of a repeat share its test set: their mean is one value, and the interval
        # is over repeats (runs are not independent draws of a test set)
        values = part.groupby("repeat")["value"].mean() if metric == "accuracy" else \
            part["value"]
        mean, low, high = mean_ci(values, (0, 2))
        rows.append({"grouping": grouping, "classifier": clf, "label": label, "mean": mean,
                     "low": low, "high": high,
                     "metric": "accuracy, runs' mean per repeat" if metric == "accuracy" else
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
    narrow = (figure_width() - 1.6) / len(metrics) < 1.2
    fig, axes = plt.subplots(len(groupings), len(metrics), squeeze=False, sharey=True,
                             figsize=(figure_width(), len(groupings) * (0.18 * len(order) + 0.8)
                                      + 0.5))
    for r, grouping in enumerate(groupings):
        for c, metric in enumerate(metrics):
            ax = axes[r][c]
            for off, clf in zip(offsets, classifiers, strict=True):
                p = points[(points["grouping"] == grouping) & (points["metric"] == metric)
                           & (points["classifier"] == clf)].set_index("label").reindex(order)
                ax.errorbar(p["mean"], np.arange(len(order)) + off,
                            xerr=[(p["mean"] - p["low"]).clip(lower=0),
                                  (p["high"] - p["mean"]).clip(lower=0)],
                            fmt=classifier_markers(classifiers)[clf], markersize=3.5,
                            capsize=1.5, elinewidth=0.8, color=_palette(classifiers)[clf],
                            label=clf)
            ax.set_yticks(range(len(order)), order, fontsize=7)
            ax.set_ylim(len(order) - 0.5, -0.5)
            ax.grid(axis="x", alpha=0.3)
            ax.tick_params(axis="x", labelsize=7)
            # a narrow panel (a single column's third) has room for two ticks and the
            # metric's name; what it is a mean of goes under the figure
            ax.xaxis.set_major_locator(MaxNLocator(2 if narrow else 5))
            if r == 0:
                ax.set_title(wrap_label(metric.split(",")[0] if narrow else metric, 0.25),
                             fontsize=7.5)
            if c == 0:
                ax.set_ylabel(f"grouped by {grouping}", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(classifiers), fontsize=8,
               frameon=False, bbox_to_anchor=(0.5, -0.01))
    _title(fig, f"{dataset}: differences between groups (max − min)",
           "accuracy: each repeat's runs' mean; the others: per repeat" if narrow else "")
    fig.tight_layout(rect=(0, legend_band(fig), 1, 1))
    save_figure(fig, out_paths)
    return points
