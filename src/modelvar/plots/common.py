"""What every figure shares: fixed classifier colours, saving."""

from __future__ import annotations

import itertools
from pathlib import Path

import matplotlib.pyplot as plt

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


def classifier_colours(classifiers) -> dict[str, str]:
    """Each classifier's colour, the same in every figure of a study: the built-ins' fixed ones,
    then a user's classifiers' in the order of their names
    (:func:`modelvar.models.registry.colour`)."""
    from modelvar.models.registry import colour

    classifiers = sorted(set(classifiers))  # the same set: the same colours, in any order
    return {c: colour(c, classifiers) for c in classifiers}


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


def overlapping_tick_labels(fig) -> list[str]:
    """Where neighbouring tick labels of ``fig`` overlap: "panel title, x: '0.0000' / '0.0025'"
    per axis (empty when none do)."""
    renderer = _renderer(fig)
    out = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            pairs = _crowded(axis, renderer)
            if pairs:
                where = ax.get_title() or ax.get_xlabel() or ax.get_ylabel() or "a panel"
                out.append(f"{where}, {axis.axis_name}: {pairs[0][0]!r} / {pairs[0][1]!r}")
    return out


def thin_crowded_ticks(fig) -> None:
    """Give every linear numeric axis whose tick labels overlap fewer ticks (``MaxNLocator``,
    halving the count until they fit, at least 2); axes with fixed or categorical ticks are left
    as drawn (their labels are names)."""
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


def save_figure(fig, out_paths: list[Path]) -> None:
    """Save ``fig`` to every path (PNG at 150 dpi; PDFs without a creation date, so they are
    byte-stable), then close it. Numeric axes whose tick labels would overlap get fewer ticks
    first; labels that still overlap are logged as a warning (``modelvar.plots``)."""
    import logging

    thin_crowded_ticks(fig)
    for problem in overlapping_tick_labels(fig):
        logging.getLogger("modelvar.plots").warning(
            "%s: tick labels overlap (%s)", Path(out_paths[0]).name, problem)
    for path in out_paths:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=150, bbox_inches="tight",
                    metadata={"CreationDate": None} if path.suffix == ".pdf" else {})
    plt.close(fig)
