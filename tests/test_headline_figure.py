"""The headline figure (issue 65, item 1; modelvar.plots.findings.sources_figure): every
dataset's evidence drawn with its own interval, nothing cut by the axis, the yardstick behind
each accuracy mark, leaders told apart ringed, identical runs hollow, the mean over datasets
only where the page states claims over datasets, and a page's height at single width."""

from __future__ import annotations

import matplotlib.image as mpimg
import numpy as np
import pytest

from conftest import planted_page
from modelvar.findings.over_datasets import MIN_DATASETS
from modelvar.plots import common
from modelvar.plots.findings import sources_figure

#: the tallest a figure may be at single width (a journal page's text height), inches
PAGE_INCHES = 8.5
DPI = 150


@pytest.mark.parametrize("datasets", [1, 3, MIN_DATASETS])
@pytest.mark.parametrize("at", ["single", "double"])
def test_every_interval_is_drawn_whole_and_the_figure_fits_aplanted_page(tmp_path, width, datasets,
                                                                  at):
    width(at)
    tables = planted_page(max(datasets, 2), seed=datasets)
    sources = tables["sources"]
    if datasets == 1:
        sources = sources[sources["dataset"] == sources["dataset"].iloc[0]]
    out = tmp_path / "headline.png"
    marks = sources_figure(sources, [out], leaders=tables["margins"])
    height, wide = (n / DPI for n in mpimg.imread(out).shape[:2])
    assert wide <= common.figure_width() + 0.05 and height <= PAGE_INCHES
    drawn = marks[np.isfinite(marks["low"]) & np.isfinite(marks["high"])]
    assert len(drawn)
    # nothing cut: every end of every interval drawn lies inside its panel's axis
    assert (drawn["low"] >= drawn["axis_low"]).all()
    assert (drawn["high"] <= drawn["axis_high"]).all()
    assert (marks["value"].between(marks["axis_low"], marks["axis_high"])).all()
    # one mark per dataset × classifier × source alone, each its own (not a pooled mean)
    points = marks[marks["kind"] == "point"]
    shown = sources[sources["source"] != "test set"]
    assert len(points) == int(shown["accuracy_sd"].notna().sum()
                              + shown["disagreement"].notna().sum())
    assert set(points["dataset"]) == set(sources["dataset"])
    # the yardstick behind every accuracy mark of its dataset × classifier
    sticks = marks[marks["kind"] == "yardstick"]
    accuracy = points[points["panel"] == "run-to-run SD of accuracy"]
    assert len(sticks) == len(accuracy) and sticks["panel"].eq(accuracy["panel"].iloc[0]).all()
    # the mean over datasets only where the page states claims over datasets
    means = marks[marks["kind"] == "mean over datasets"]
    assert means.empty == (datasets < MIN_DATASETS)


def test_leaders_told_apart_are_ringed_and_identical_runs_hollow(tmp_path):
    tables = planted_page(3, seed=11)
    marks = sources_figure(tables["sources"], [tmp_path / "h.png"], leaders=tables["margins"])
    held = tables["margins"][tables["margins"]["verdict"] == "supported"]
    assert len(held)
    ringed = marks[marks["leader"]]
    assert sorted(zip(ringed["dataset"], ringed["classifier"], ringed["level"], strict=True)) == \
        sorted(zip(held["dataset"], held["classifier"], held["leader"], strict=True))
    # the control's runs within a repeat are identical: no effect, drawn hollow
    control = marks[(marks["kind"] == "point") & (marks["level"] == "control")]
    assert len(control) and control["hollow"].all()
    assert not marks.loc[marks["kind"] == "point", "hollow"].all()


@pytest.mark.parametrize(("distinct", "violins"), [(5, False), (50, True)])
def test_a_density_needs_enough_distinct_values_not_rows(distinct, violins):
    """Fifty runs that take five accuracies are drawn as their values; fifty distinct values
    as violins (issue 65, item 3)."""
    import matplotlib.collections as mc
    import matplotlib.pyplot as plt
    import pandas as pd

    from modelvar.plots.study import MIN_VALUES_FOR_DENSITY, _violin_grid

    assert (distinct < MIN_VALUES_FOR_DENSITY) != violins and MIN_VALUES_FOR_DENSITY <= 50
    rng = np.random.default_rng(0)
    levels = np.linspace(0.70, 0.74, distinct)
    data = pd.DataFrame({"cell": np.repeat(["control", "data rel 0.2"], 50),
                         "classifier": "lr-sgd",
                         "accuracy": np.concatenate([rng.permutation(np.resize(levels, 50))
                                                     for _ in range(2)])})
    fig = _violin_grid(data, x="cell", y="accuracy", row=None, col=None, xlabel="",
                       ylabel="accuracy", title="t", note="50 runs a violin")
    bodies = [c for ax in fig.axes for c in ax.collections
              if isinstance(c, mc.PolyCollection)]
    dots = [c for ax in fig.axes for c in ax.collections
            if isinstance(c, mc.PathCollection) and len(c.get_offsets())]
    assert bool(bodies) == violins and bool(dots) != violins
    said = " ".join(t.get_text() for t in fig.texts).replace("\n", " ")
    assert ("as few as 5 distinct values a group" in said) == (not violins)
    plt.close(fig)


def test_the_findings_page_shows_each_figure_with_its_caption_before_the_per_dataset_sentences(
        tmp_path):
    """Item 9: every headline figure the workflow can draw has a caption saying what is drawn,
    over how many datasets and repeats, and which interval; the page shows each under its
    title with its caption, after the sentences over datasets and before the per-dataset
    ones; the report's first screen shows the headline's caption under it."""
    import pandas as pd

    from modelvar.findings.figures import findings_figures
    from modelvar.findings.report import answer_rst, findings_html
    from modelvar.findings.sources import study_sources
    from modelvar.plots.findings import caption

    tables = planted_page(3, seed=4)
    names = findings_figures("both", ["a", "b"], {"data": [{"rel": 0.1}, {"rel": 0.2}],
                                                  "model_seed": ["fixed"]}, datasets=3)
    assert "sources_of_variance" in names
    for name in [n for n in names if not n.startswith("verdicts_")]:
        said = caption(name, tables["sources"])
        assert "3 datasets" in said and "5 repeats each" in said, name
    with pytest.raises(ValueError, match="no caption"):
        caption("unknown", tables["sources"])
    out = tmp_path / "h.png"
    sources_figure(tables["sources"], [out], leaders=tables["margins"])
    title = "Sources of variance, each alone against the control"
    words = caption("sources_of_variance", tables["sources"])
    page = findings_html(tables["sources"], study_sources(tables["sources"]),
                         tables["components"], tables["study_components"], tables["claims"],
                         notes=[], strength=pd.DataFrame(), figures={title: out},
                         margins=tables["margins"], captions={title: words})
    figure = page.index("<figure><h3>Sources of variance")
    assert page.index("<h3>Over the 3 datasets</h3>") < figure < page.index(
        "<h3>Per dataset</h3>")
    assert f"<figcaption>{words}</figcaption>" in page.replace("&#x27;", "'")
    first = answer_rst(tables["sources"], tables["components"], out, tables["margins"],
                       caption=words)
    assert first.index(".. image::") < first.index("*Each source alone")


def test_metrics_of_different_ranges_each_get_their_own_axis():
    """Item 5: where metrics of different ranges meet (EC distributions), each panel has its
    own value axis: the narrow metric (global EC, 0.18-0.26) and a classifier's values a
    fraction of the other's (xgb's global EC, 0.02-0.05 on anneal) fill at least 60 % of their
    panel, instead of a sliver of an axis shared with local EC (0.4-1.0) or lr-sgd."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from modelvar.plots.study import _violin_grid

    rng = np.random.default_rng(1)
    frames = []
    for metric, centre, sd in (("global EC", 0.22, 0.015), ("local EC", 0.7, 0.12)):
        for clf, scale in (("lr-sgd", 1.0), ("xgb", 0.15)):
            frames.append(pd.DataFrame({"metric": metric, "classifier": clf,
                                        "data": np.repeat(["none", "rel 0.2"], 40),
                                        "mean": np.clip(rng.normal(centre, sd, 80), 0, 1)
                                        * scale}))
    data = pd.concat(frames, ignore_index=True)
    fig = _violin_grid(data, x="data", y="mean", row="metric", col="classifier", xlabel="",
                       ylabel="repeat mean", title="t", note="", axis_per="metric")
    assert len(fig.axes) == 4  # rows: global EC, local EC; columns: the classifiers
    for i, ax in enumerate(fig.axes):
        metric, clf = ("global EC", "local EC")[i // 2], ("lr-sgd", "xgb")[i % 2]
        values = data.loc[(data["metric"] == metric) & (data["classifier"] == clf), "mean"]
        low, high = ax.get_ylim()
        assert low <= values.min() and values.max() <= high
        assert (values.max() - values.min()) / (high - low) >= 0.6, metric
    plt.close(fig)


def test_group_disparities_take_accuracy_intervals_over_repeats_and_a_marker_per_classifier(
        tmp_path, monkeypatch):
    """Item 6 and the small defects: the runs of a repeat share its test set, so accuracy's
    interval is over the repeats' means (not over every run as if independent), and each
    classifier has its own marker beside its colour."""
    import pandas as pd

    from modelvar.findings.sources import mean_ci
    from modelvar.plots import study

    control = "dnone_cnone_hnone_down100_seedfix"
    rng = np.random.default_rng(2)
    rows = []
    for clf in ("lr-sgd", "xgb"):
        for repeat in range(6):
            level = rng.normal(0.2, 0.05)  # a repeat's test set sets the level
            for run in range(10):
                rows.append({"classifier": clf, "cell": control, "repeat": repeat,
                             "run": run, "grouping": "sex", "metric": "accuracy",
                             "aggregate": "difference_minmax",
                             "value": level + rng.normal(0, 0.002)})
    disparities = pd.DataFrame(rows)
    drawn = []
    monkeypatch.setattr(study, "save_figure", lambda fig, paths: drawn.append(fig))
    roles = {clf: {control: ("one-at-a-time", "factorial")} for clf in ("lr-sgd", "xgb")}
    points = study.group_disparities(disparities, roles, "d", [tmp_path / "g.png"])
    for clf, part in disparities.groupby("classifier"):
        expect = mean_ci(part.groupby("repeat")["value"].mean(), (0, 2))
        got = points[points["classifier"] == clf].iloc[0]
        assert (got["low"], got["high"]) == pytest.approx(expect[1:], rel=1e-9)
        naive = mean_ci(part["value"], (0, 2))
        assert got["high"] - got["low"] > 2 * (naive[2] - naive[1])
    markers = {line.get_marker() for ax in drawn[0].axes for line in ax.get_lines()
               if line.get_marker() not in (None, "None", "", "|")}
    assert len(markers) == 2


def test_the_source_data_names_every_mark_and_finds_one_the_axis_cuts(tmp_path):
    """Item 8: a figure's CSV has one row per drawn mark — points, intervals, dots with their
    distinct values, densities, error bars, bands — with its category and its panel's axis
    limits; a mark beyond the limits (a cut interval) shows as such."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from modelvar.plots.common import save_figure

    fig, (left, right) = plt.subplots(1, 2, figsize=(3.4, 2))
    left.plot([0.2], [0], marker="o", linestyle="none")
    left.plot([0.1, 0.3], [0, 0])  # an interval
    left.plot([0.5, 1.4], [1, 1])  # cut by the axis below
    left.scatter([0.4, 0.4, 0.5], [2, 2.1, 1.9])
    left.errorbar([0.3], [3], xerr=[[0.1], [0.2]], fmt="s")
    left.add_patch(plt.Rectangle((0.1, 3.8), 0.4, 0.4))
    left.set_yticks(range(5), ["a", "b", "c", "d", "e"])
    left.set_xlim(0, 1)
    left.set_title("left")
    right.violinplot([np.linspace(0, 1, 40)])
    right.axvline(0.5)  # across the panel: not a mark
    right.set_title("right")
    save_figure(fig, [tmp_path / "f.png", tmp_path / "f.csv"])
    marks = pd.read_csv(tmp_path / "f.csv")
    mine = marks[marks["panel"] == "left"]
    assert {"point", "segment", "dots", "bars", "band"} <= set(mine["kind"])
    dots = mine[mine["kind"] == "dots"].iloc[0]
    assert (dots["n"], dots["distinct"], dots["category"]) == (3, 2, "c")
    cut = mine[mine["x_max"] > mine["x_high"]]
    assert len(cut) == 1 and cut.iloc[0]["category"] == "b"
    assert "density" in set(marks.loc[marks["panel"] == "right", "kind"])
    assert (tmp_path / "f.png").stat().st_size > 0
