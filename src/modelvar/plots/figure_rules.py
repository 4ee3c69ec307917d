"""The rules every figure of the set keeps, checked from its source data (``FIGURE.csv``,
:func:`modelvar.plots.common.drawn_marks`): what a figure editor checks before a figure goes
into a paper (issue 65; ``../shared/reference/figure-conventions.md``).

* **Nothing cut**: every mark lies inside its panel's axis limits.
* **A density from enough values**: a violin or other density is drawn from at least
  :data:`~modelvar.plots.study.MIN_VALUES_FOR_DENSITY` distinct values; fewer are drawn as
  dots.
* **A measure on its own scale**: in a panel of global EC (the seed's recommended measure),
  the marks span at least :data:`MIN_FILL` of the value axis.
* **A page's size**: the saved image (with its margin) at most the figure set's width (and
  :data:`SLACK_INCHES`) wide and :data:`PAGE_INCHES` tall.

:func:`breaches` lists what one figure breaks; :func:`check_results` every figure of a results
folder (``scripts/check_figures.py``, the workflow test of the tiny study).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

#: the tallest a figure may be (a journal page's text height), inches
PAGE_INCHES = 8.5
#: how far past the figure set's width a saved image may reach (rounding of its pixels)
SLACK_INCHES = 0.05
#: the least share of its value axis a global-EC panel's marks span
MIN_FILL = 0.6
#: the panels whose measure must fill its axis, by a word of their name
FILLED = ("global EC",)


def _cut(marks: pd.DataFrame) -> pd.DataFrame:
    room_x = 1e-9 * (marks["x_high"] - marks["x_low"]).abs() + 1e-12
    room_y = 1e-9 * (marks["y_high"] - marks["y_low"]).abs() + 1e-12
    return marks[(marks["x_min"] < marks["x_low"] - room_x)
                 | (marks["x_max"] > marks["x_high"] + room_x)
                 | (marks["y_min"] < marks["y_low"] - room_y)
                 | (marks["y_max"] > marks["y_high"] + room_y)]


def _fill(panel: pd.DataFrame) -> float:
    """The share of the panel's value axis its marks span (NaN without a value axis)."""
    axis = panel["value_axis"].dropna()
    if axis.empty or axis.iloc[0] not in ("x", "y"):
        return np.nan
    a = axis.iloc[0]
    low, high = panel[f"{a}_low"].iloc[0], panel[f"{a}_high"].iloc[0]
    span = panel[f"{a}_max"].max() - panel[f"{a}_min"].min()
    return float(span / (high - low)) if high > low else np.nan


def breaches(marks: pd.DataFrame, *, width: float, name: str = "") -> list[str]:
    """What the figure whose source data is ``marks`` breaks (module docstring), drawn for a
    figure set ``width`` inches wide; each breach one line naming the figure, its panel and
    mark."""
    from modelvar.plots.study import MIN_VALUES_FOR_DENSITY

    out = [f"{name}: {r.panel} {r.category} {r.kind}: cut by the axis"
           for r in _cut(marks).itertuples()]
    densities = marks[(marks["kind"] == "density")]
    thin = densities[~(densities["distinct"] >= MIN_VALUES_FOR_DENSITY)]
    out += [f"{name}: {r.panel} {r.category}: a density from "
            f"{'an unknown number of' if pd.isna(r.distinct) else int(r.distinct)} distinct "
            "values" for r in thin.itertuples()]
    for panel, part in marks.groupby("panel"):
        if any(word in str(panel) for word in FILLED):
            fill = _fill(part)
            if np.isfinite(fill) and fill < MIN_FILL:
                out.append(f"{name}: {panel}: its marks fill {fill:.0%} of the value axis "
                           f"(at least {MIN_FILL:.0%})")
    if len(marks) and "figure_width" in marks:
        wide, tall = float(marks["figure_width"].iloc[0]), float(marks["figure_height"].iloc[0])
        if wide > width + SLACK_INCHES:
            out.append(f"{name}: {wide:.2f} in wide, wider than {width:.2f} in")
        if tall > PAGE_INCHES:
            out.append(f"{name}: {tall:.2f} in tall, taller than a page's {PAGE_INCHES} in")
    return out


def figures_of(results: Path) -> list[Path]:
    """Every figure's source data in a results folder (beside its picture): each dataset's,
    the Findings' and the simulations'."""
    results = Path(results)
    return sorted(png.with_suffix(".csv") for png in [
        *results.glob("*/figures/*.png"), *results.glob("findings/*.png"),
        *results.glob("simulation/*/*.png")])


def check_results(results: Path, width: float) -> dict[str, list[str]]:
    """Each figure of ``results`` (drawn ``width`` inches wide) with what it breaks."""
    results = Path(results)
    named = {str(path.relative_to(results).with_suffix("")): path
             for path in figures_of(results)}
    return {name: breaches(pd.read_csv(path), width=width, name=name)
            for name, path in named.items()}
