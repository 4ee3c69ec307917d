"""What every figure shares: the journal style, the width of the figure set, each
classifier's colour and marker, saving.

**Journal style** (docs/measurements and ``../shared/reference/figure-conventions.md``): fonts
embedded as TrueType (``pdf.fonttype`` 42: journal submission systems reject or flag Type 3),
text at print size no smaller than :data:`MIN_FONT_PT` points (the figure is drawn at the width
it is printed at, never shrunk), lines at least 0.5 pt. **Width**: the figure set is drawn at a
journal's single (:data:`WIDTHS` ``single``, 3.5 in) or double column (7.2 in, the default) or
at a width in inches (config ``figures.width``); figures lay out their panels for it.
**Colours**: the Okabe–Ito palette (Okabe & Ito 2008), distinguishable for colour-blind readers
and in greyscale, one colour and one marker per classifier, the same in every figure of a study
(:func:`modelvar.models.registry.colour`).
"""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from modelvar.table_files import write_bytes

#: journal column widths in inches (config ``figures.width``)
WIDTHS = {"single": 3.5, "double": 7.2}
#: the smallest text at print size, points
MIN_FONT_PT = 7.0
#: how far a saved figure may exceed the figure set's width (inches)
WIDTH_SLACK_IN = 0.15

#: each classifier's marker, by its place in the study's colour order
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")
STYLE = {
    "pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none",
    "font.size": 7.5, "axes.titlesize": 7.5, "axes.labelsize": 7.5, "xtick.labelsize": 7,
    "ytick.labelsize": 7, "legend.fontsize": 7, "legend.title_fontsize": 7,
    "figure.titlesize": 8.5, "lines.linewidth": 1.0, "axes.linewidth": 0.6,
    "xtick.major.width": 0.6, "ytick.major.width": 0.6, "grid.linewidth": 0.5,
    "patch.linewidth": 0.5, "lines.markersize": 4,
}
mpl.rcParams.update(STYLE)
_width = {"inches": WIDTHS["double"]}


def set_width(width: str | float) -> float:
    """Draw the figure set at ``width``: ``single``, ``double`` or inches; returns inches."""
    inches = WIDTHS[width] if isinstance(width, str) else float(width)
    if not 2.0 <= inches <= 12.0:
        raise ValueError(f"figures.width: {width!r} is not a printable width (2 to 12 in)")
    _width["inches"] = inches
    return inches


def figure_width() -> float:
    """The width the figures are drawn at, inches."""
    return _width["inches"]


def wrap_label(text: str, panel_share: float = 0.5) -> str:
    """A tick label wrapped to at most ``panel_share`` of the figure width (at 7 pt, about
    15 characters an inch), so that long cell labels do not push a narrow figure wider."""
    import textwrap

    return "\n".join(textwrap.wrap(text, max(12, int(figure_width() * panel_share * 15)))) \
        or text


def row_inches(labels) -> float:
    """The height a row of a panel needs for its tick label (7 pt lines)."""
    return 0.05 + 0.115 * max((str(label).count("\n") + 1 for label in labels), default=1)


def columns_that_fit(panel_inches: float, wanted: int, margin: float = 0.9) -> int:
    """How many panels of ``panel_inches`` fit side by side in the figure width (at least 1,
    at most ``wanted``)."""
    return max(1, min(wanted, int((figure_width() - margin) // panel_inches)))

#: What figures call the metrics that are not pairwise (those are named in their registry,
#: :mod:`modelvar.metrics.registry`), and the simulation's per-repeat means.
OTHER_METRIC_NAMES = {
    "accuracy": "accuracy",
    "mean_pa": "percent agreement",
    "mean_ec_global": "global EC",
    "mean_accuracy": "mean accuracy",
    "mean_kappa": "Cohen's κ",
}


def metric_name(metric: str) -> str:
    """What figures call a metric (never its id, unless it has no name)."""
    from modelvar.metrics import registry

    if metric in registry.names():
        return registry.metric(metric).label
    return OTHER_METRIC_NAMES.get(metric, metric)


#: Okabe and Ito's colour-blind-safe palette, then grey: the colours of classifiers the study
#: gave none (:func:`set_colours`), in the order of their names
PALETTE = ("#0072B2", "#56B4E9", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#000000",
           "#F0E442", "#777777")
_COLOURS: dict[str, str] = {}


def set_colours(colours: dict[str, str]) -> None:
    """The study's classifier colours, decided by the workflow (each classifier's
    :func:`modelvar.models.registry.colour`) and handed to the figure jobs: a job never looks
    them up in the classifier registry, so changing the models reruns no figure and a colour
    no fit."""
    _COLOURS.clear()
    _COLOURS.update(colours)


def classifier_colours(classifiers) -> dict[str, str]:
    """Each classifier's colour, the same in every figure of a study: the study's
    (:func:`set_colours`), then the unused colours of :data:`PALETTE` for the others in the
    order of their names."""
    classifiers = sorted(set(classifiers))  # the same set: the same colours, in any order
    free = [c for c in PALETTE if c not in {_COLOURS.get(n) for n in classifiers}]
    missing = [n for n in classifiers if n not in _COLOURS]
    return {c: _COLOURS.get(c) or free[min(missing.index(c), len(free) - 1)]
            for c in classifiers}


def _renderer(fig):
    """Draw ``fig`` and return its renderer (on an Agg canvas if it has none, e.g. closed)."""
    if not hasattr(fig.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _crowded(axis, renderer) -> list[tuple[str, str]]:
    """Neighbouring tick labels of one axis whose drawn boxes overlap (horizontal or vertical
    labels; others are skipped: their boxes overlap where their letters do not)."""
    labels = [t for t in axis.get_ticklabels()
              if t.get_visible() and t.get_text() and t.get_rotation() % 90 == 0]
    horizontal = axis.axis_name == "x"
    boxes = sorted(((t.get_window_extent(renderer), t.get_text()) for t in labels),
                   key=lambda b: b[0].x0 if horizontal else b[0].y0)
    out = []
    for (a, ta), (b, tb) in itertools.pairwise(boxes):
        gap = b.x0 - a.x1 if horizontal else b.y0 - a.y1
        if gap < 0:
            out.append((ta, tb))
    return out


def overlapping_tick_labels(fig, renderer=None) -> list[str]:
    """Where neighbouring tick labels of ``fig`` overlap: "panel title, x: '0.0000' / '0.0025'"
    per axis (empty when none do). ``renderer``: of a draw of ``fig`` as it is now (default:
    draw it)."""
    renderer = renderer if renderer is not None else _renderer(fig)
    out = []
    for ax in fig.axes:
        if not ax.axison:  # an axis turned off draws no tick labels
            continue
        for axis in (ax.xaxis, ax.yaxis):
            pairs = _crowded(axis, renderer)
            if pairs:
                where = ax.get_title() or ax.get_xlabel() or ax.get_ylabel() or "a panel"
                out.append(f"{where}, {axis.axis_name}: {pairs[0][0]!r} / {pairs[0][1]!r}")
    return out


def thin_crowded_ticks(fig):
    """Give every linear numeric axis whose tick labels overlap fewer ticks (``MaxNLocator``,
    halving the count until they fit, at least 2); axes with fixed or categorical ticks are left
    as drawn (their labels are names). Returns the renderer of the last draw, which shows the
    figure as it now is (a figure of many panels takes seconds to draw: draw it once)."""
    from matplotlib.ticker import MaxNLocator

    renderer = _renderer(fig)
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if not isinstance(axis.get_major_locator(), MaxNLocator):
                continue
            bins = len(axis.get_ticklocs())
            while _crowded(axis, renderer) and bins > 2:
                bins = max(2, bins // 2)
                axis.set_major_locator(MaxNLocator(nbins=bins))
                fig.canvas.draw()
    return renderer


def classifier_markers(classifiers) -> dict[str, str]:
    """Each classifier's marker, in the order of :func:`classifier_colours` (a second cue
    beside the colour)."""
    return {c: MARKERS[i % len(MARKERS)] for i, c in enumerate(sorted(set(classifiers)))}


def small_text(fig) -> list[str]:
    """The visible texts of ``fig`` smaller than :data:`MIN_FONT_PT` (its size is its print
    size: figures are drawn at their printed width)."""
    return [f"{t.get_text()[:30]!r} at {t.get_fontsize():g} pt" for t in fig.findobj(
        mpl.text.Text) if t.get_visible() and t.get_text().strip()
        and t.get_fontsize() < MIN_FONT_PT - 1e-9]


def legend_band(fig, legend_rows: int = 1) -> float:
    """The share of ``fig``'s height a legend under its panels needs (``tight_layout``'s
    ``rect`` bottom): a fixed band in inches per row of entries, so a short figure's legend
    does not run into its tick labels."""
    return min((0.08 + 0.17 * legend_rows) / fig.get_figheight(), 0.4)


def _panel_name(ax, i: int) -> str:
    titles = [ax.get_title(loc) for loc in ("left", "center", "right")]
    margins = [t.get_text() for t in ax.texts if t.get_text().strip()
               and t.get_transform() != ax.transData]
    return " · ".join(t for t in [*titles, *margins] if t.strip()) or f"panel {i + 1}"


def _category_ticks(axis) -> list[tuple[float, str]]:
    """A categorical axis's ticks (position, label); none where the labels are numbers."""
    ticks = [(float(t.get_loc()), t.label1.get_text()) for t in axis.get_major_ticks()
             if t.label1.get_text().strip()]
    try:
        [float(label.replace("−", "-")) for _, label in ticks]
    except ValueError:
        return ticks
    return []


def _category_of(ticks: list[tuple[float, str]], low: float, high: float) -> str:
    if not ticks:
        return ""
    centre = (low + high) / 2
    where, label = min(ticks, key=lambda t: abs(t[0] - centre))
    return label.replace("\n", " ") if abs(where - centre) <= 0.5 else ""


def _mark(rows: list[dict], where: dict, kind: str, xy, **extra) -> None:
    """One row of :func:`drawn_marks`: the mark's extent over its finite points, and the
    category it is drawn at on a categorical axis."""
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    xy = xy[np.isfinite(xy).all(axis=1)]
    if len(xy):
        x_min, x_max, y_min, y_max = (xy[:, 0].min(), xy[:, 0].max(), xy[:, 1].min(),
                                      xy[:, 1].max())
        rows.append({"kind": kind, "n": len(xy), "x_min": x_min, "x_max": x_max,
                     "y_min": y_min, "y_max": y_max, **extra,
                     "category": _category_of(where["x_ticks"], x_min, x_max)
                     or _category_of(where["y_ticks"], y_min, y_max),
                     **{k: v for k, v in where.items() if not k.endswith("_ticks")}})


def drawn_marks(fig, size: tuple[float, float] | None = None) -> pd.DataFrame:
    """The source data of ``fig``: one row per mark drawn in data coordinates in each panel —
    ``point`` (one marker), ``segment`` (an interval or a band's edge: two points), ``line``
    (more), ``dots`` (a scatter or strip: its ``n`` values and how many ``distinct`` on the value
    axis), ``density`` (a violin's body), ``bars`` (error bars), ``band`` (a rectangle) — with
    the category it is drawn at (the nearest tick label of a categorical axis), its extent
    (``x_min`` … ``y_max``), the panel's axis limits (``x_low`` … ``y_high``) and the axis its
    values are read on (``value_axis``: the other one of a categorical axis); a density
    how few distinct values it was drawn from (``distinct``, where its drawer says); ``size``:
    the saved image's width and height in inches (with its margin), on every row. Reference
    lines drawn across a panel (axis coordinates) are not marks."""
    import matplotlib.collections as mc
    import matplotlib.patches as mp

    rows: list[dict] = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison:
            continue
        (x_low, x_high), (y_low, y_high) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
        where = {"panel": _panel_name(ax, i), "x_low": x_low, "x_high": x_high,
                 "y_low": y_low, "y_high": y_high, "x_ticks": _category_ticks(ax.xaxis),
                 "y_ticks": _category_ticks(ax.yaxis)}
        # the axis the values are read on: the other one of a categorical axis
        where["value_axis"] = "y" if where["x_ticks"] else "x" if where["y_ticks"] else ""

        def add(kind, xy, where=where, **extra):
            _mark(rows, where, kind, xy, **extra)

        for line in ax.get_lines():
            if not line.get_visible() or line.get_transform() != ax.transData:
                continue
            xy = line.get_xydata()
            marker = line.get_marker() not in (None, "None", "", " ")
            add("point" if len(xy) == 1 and marker else "segment" if len(xy) == 2 else "line",
                xy)
        for collection in ax.collections:
            if not collection.get_visible():
                continue
            if isinstance(collection, mc.PolyCollection) and \
                    collection.get_transform() == ax.transData:
                # a density says how few distinct values it was drawn from (its gid,
                # "distinct=<n>", set by the function that drew it)
                gid = collection.get_gid() or ""
                distinct = int(gid.split("=", 1)[1]) if gid.startswith("distinct=") else None
                for path in collection.get_paths():
                    add("density", path.vertices, distinct=distinct)
            elif isinstance(collection, mc.LineCollection) and \
                    collection.get_transform() == ax.transData:
                segments = [np.asarray(seg, dtype=float).reshape(-1, 2)
                            for seg in collection.get_segments()]
                if segments:
                    add("bars", np.concatenate(segments))
            elif isinstance(collection, mc.PathCollection) and \
                    collection.get_offset_transform() == ax.transData:
                offsets = np.asarray(collection.get_offsets(), dtype=float)
                if len(offsets):  # distinct values on the value axis (not the categories')
                    values = offsets[:, 0] if where["y_ticks"] else offsets[:, 1] \
                        if where["x_ticks"] else offsets
                    add("dots", offsets,
                        distinct=len(np.unique(np.round(values, 12), axis=0)))
        for patch in ax.patches:
            if isinstance(patch, mp.Rectangle) and patch.get_visible() and \
                    patch.get_transform().contains_branch(ax.transData):
                x, y, w, h = patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height()
                if w or h:  # a legend's stand-in patch has no size and no place
                    add("band", [[x, y], [x + w, y + h]])
    width, height = size if size is not None else (np.nan, np.nan)
    return pd.DataFrame(rows, columns=["panel", "category", "kind", "n", "x_min", "x_max",
                                       "y_min", "y_max", "distinct", "x_low", "x_high",
                                       "y_low", "y_high", "value_axis"]).assign(
                                           figure_width=width, figure_height=height)


def save_figure(fig, out_paths: list[Path]) -> None:
    """Save ``fig`` to every path, each all or nothing (PNG at 150 dpi; PDFs without a
    creation date, so they are byte-stable, with TrueType fonts; CSV: its source data,
    :func:`drawn_marks`), then close it. Numeric axes
    whose tick labels would overlap get fewer ticks first; labels that still overlap, and text
    below :data:`MIN_FONT_PT`, are logged as a warning (``modelvar.plots``)."""
    import logging

    log = logging.getLogger("modelvar.plots")
    # the PDFs' TrueType subsetting logs each table it prunes at INFO: not a job's news
    logging.getLogger("fontTools").setLevel(logging.WARNING)
    renderer = thin_crowded_ticks(fig)
    for problem in overlapping_tick_labels(fig, renderer):
        log.warning("%s: tick labels overlap (%s)", Path(out_paths[0]).name, problem)
    for problem in small_text(fig):
        log.warning("%s: text below %g pt: %s", Path(out_paths[0]).name, MIN_FONT_PT, problem)
    box = fig.get_tightbbox(renderer)  # the saved size (bbox_inches="tight")
    drawn = box.width
    if drawn > figure_width() + WIDTH_SLACK_IN:
        log.warning("%s: %.2f in wide, wider than the figure set's %.2f in",
                    Path(out_paths[0]).name, drawn, figure_width())
    for path in out_paths:  # drawn in memory, written atomically (modelvar.table_files)
        path = Path(path)
        if path.suffix == ".csv":
            # the saved image's size: its tight box and the margin savefig adds around it
            pad = 2 * float(mpl.rcParams["savefig.pad_inches"])
            marks = drawn_marks(fig, (box.width + pad, box.height + pad))
            write_bytes(marks.to_csv(index=False, float_format="%.6g").encode(), path)
            continue
        buffer = io.BytesIO()
        fig.savefig(buffer, dpi=150, bbox_inches="tight", format=path.suffix[1:],
                    metadata={"CreationDate": None} if path.suffix == ".pdf" else {})
        write_bytes(buffer.getvalue(), path)
    plt.close(fig)
