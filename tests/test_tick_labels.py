"""Tick labels never drawn over each other (issue 22): save_figure thins a crowded numeric axis
and names what it cannot fix."""

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FormatStrFormatter

from modelvar.plots.common import overlapping_tick_labels, save_figure


def narrow_panels():
    """Issue 22's case: a narrow panel whose x axis spans 0 to 0.01 with 4-decimal labels
    ("0.00000.00250.0050…" in anneal's sources figure)."""
    fig, axes = plt.subplots(1, 4, figsize=(6, 2))
    for ax in axes:
        ax.plot(np.linspace(0, 0.0125, 10), np.arange(10))
        ax.xaxis.set_major_formatter(FormatStrFormatter("%.4f"))
        ax.set_xticks(np.linspace(0, 0.0125, 6))
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(nbins=6))
    return fig


def test_a_crowded_numeric_axis_is_found_and_thinned_on_save(tmp_path, caplog):
    fig = narrow_panels()
    assert overlapping_tick_labels(fig), "the case is not crowded: the test would prove nothing"
    with caplog.at_level(logging.WARNING, logger="modelvar.plots"):
        save_figure(fig, [tmp_path / "f.png"])
    assert "tick labels overlap" not in caplog.text
    assert overlapping_tick_labels(fig) == []
    assert all(len(ax.get_xticks()) >= 2 for ax in fig.axes)


def test_crowded_category_names_are_reported_not_dropped(tmp_path, caplog):
    fig, ax = plt.subplots(figsize=(2, 2))
    names = [f"category number {i}" for i in range(6)]
    ax.bar(names, np.arange(6))
    ax.set_title("bars")
    found = overlapping_tick_labels(fig)
    assert found and found[0].startswith("bars, x: 'category number 0' / 'category number 1'")
    with caplog.at_level(logging.WARNING, logger="modelvar.plots"):
        save_figure(fig, [tmp_path / "g.png"])
    assert "g.png: tick labels overlap (bars, x:" in caplog.text
    assert [t.get_text() for t in ax.get_xticklabels()] == names


def test_labels_apart_are_not_reported():
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([0, 1], [0, 1])
    assert overlapping_tick_labels(fig) == []
    plt.close(fig)
