"""A figure for every kind of claim the page draws (issue 65, item 2;
modelvar.plots.verdicts): each judged claim one mark with its interval against the reference,
ringed exactly where its verdict holds under the page's control, nothing cut by the axis, the
equivalence band where the kind states equivalence, a page's size at single and double width;
the figures over datasets only where the page states claims over datasets."""

from __future__ import annotations

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest

from conftest import planted_page
from modelvar.findings import kinds as registry
from modelvar.findings.figures import verdict_figures
from modelvar.findings.over_datasets import MIN_DATASETS
from modelvar.plots import common
from modelvar.plots.verdicts import verdict_caption, verdict_figure

PAGE_INCHES = 8.5
DPI = 150


@pytest.mark.parametrize("datasets", [3, MIN_DATASETS])
@pytest.mark.parametrize("at", ["single", "double"])
def test_each_claim_is_drawn_with_its_interval_and_ringed_where_it_holds(tmp_path, width,
                                                                       datasets, at):
    width(at)
    tables = planted_page(datasets, seed=datasets)
    verdicts = tables["verdicts"]
    names = verdict_figures("both", datasets)
    drawn = [k for k in registry.kinds() if k.figure in names]
    # the kinds over datasets are drawn only where the page states claims over datasets
    assert {k.unit for k in drawn} == ({registry.REPEATS, registry.DATASETS}
                                       if datasets >= MIN_DATASETS else {registry.REPEATS})
    for kind in drawn:
        table = tables[kind.table]
        out = tmp_path / f"{kind.figure}.png"
        marks = verdict_figure(kind, table, verdicts, [out, tmp_path / f"{kind.figure}.csv"])
        mine = verdicts[verdicts["kind"] == kind.name]
        estimate = table[kind.drawn.estimate].astype(float)
        expected = table if kind.drawn.every_row else table.loc[mine["row"]]
        assert len(marks) == int(np.isfinite(estimate[expected.index]).sum()) > 0, kind.name
        # ringed exactly where the page's verdict holds
        holds = set(mine.loc[mine["holds"].astype(bool), "row"])
        assert set(marks.loc[marks["holds"], "table_row"]) == holds & set(expected.index), \
            kind.name
        # nothing cut: every interval end, band end and the reference inside its panel
        for column in ("estimate", "low", "high", "band_low", "band_high"):
            ends = marks[np.isfinite(marks[column])]
            assert ((ends[column] >= ends["axis_low"]) & (ends[column] <= ends["axis_high"])
                    ).all(), (kind.name, column)
        if kind.drawn.reference is not None:
            assert ((marks["axis_low"] <= kind.drawn.reference)
                    & (kind.drawn.reference <= marks["axis_high"])).all()
        if kind.drawn.band is not None:
            assert np.isfinite(marks["band_low"]).all()
        # a page's size, and the same marks in the figure's source data
        height, wide = (n / DPI for n in mpimg.imread(out).shape[:2])
        assert wide <= common.figure_width() + 0.05 and height <= PAGE_INCHES, kind.name
        source = pd.read_csv(tmp_path / f"{kind.figure}.csv")
        assert (source["kind"] == "point").sum() >= len(marks)
        said = verdict_caption(kind, table, verdicts)
        assert f"{datasets} datasets" in said and "Ringed" in said


def test_a_kind_with_no_claim_on_the_page_says_so(tmp_path):
    from matplotlib import pyplot as plt

    kind = registry.kind("leader")
    table = planted_page(3, seed=1)["margins"].iloc[0:0]
    shown = []
    real = plt.Figure.savefig

    def keep(fig, *args, **kwargs):
        shown.extend(t.get_text() for ax in fig.axes for t in ax.texts)
        return real(fig, *args, **kwargs)

    plt.Figure.savefig = keep
    try:
        marks = verdict_figure(kind, table, pd.DataFrame(columns=["kind", "row", "holds"]),
                               [tmp_path / "empty.png"])
    finally:
        plt.Figure.savefig = real
    assert marks.empty and "no leading sources on this page" in shown


def test_a_kind_whose_table_has_no_columns_draws_that_it_has_no_claim(tmp_path):
    """A study without the cells a kind needs writes its table empty, without columns (the
    components of a one-at-a-time study): its figure says there is no claim; a table with rows
    but without a column the drawing names is an error that names it."""
    kind = registry.kind("largest share")
    marks = verdict_figure(kind, pd.DataFrame(), pd.DataFrame(columns=["kind", "row", "holds"]),
                           [tmp_path / "none.png", tmp_path / "none.csv"])
    assert marks.empty and (tmp_path / "none.png").stat().st_size > 0
    with pytest.raises(ValueError, match="has no column.*'share'"):
        verdict_figure(kind, pd.DataFrame({"classifier": ["a"]}), pd.DataFrame(),
                       [tmp_path / "bad.png"])


def test_a_drawing_needs_a_known_part_of_the_design():
    with pytest.raises(ValueError, match="part 'grid' is none of"):
        registry.Drawing("margin", "margin_low", "margin_high", panel="measure",
                         row="leader", axis="a − b", part="grid")
