"""The figure registry: each dataset figure declared once, without importing the plotting
stack.

The workflow reads this registry while it loads (which figures a design draws, their report
titles and order, the tables the ``figures`` rule needs), so loading it costs no matplotlib or
seaborn import; the ``figures`` job (:mod:`modelvar.jobs.figures`) draws each with the function
of its name in :mod:`modelvar.plots.study`. A figure is one :class:`FigureSpec` in
:data:`DATASET_FIGURES` plus its function ``name(*tables, roles, dataset, out_paths)`` there
and a caption ``workflow/report/<name>.rst`` (docs/developing.md, "Add a figure").

The Findings page's figures are decided in :mod:`modelvar.findings.figures` (they depend on the
kinds of claim the page states).
"""

from __future__ import annotations

from dataclasses import dataclass

#: the parts of the design a figure can need (:mod:`modelvar.study.design`)
PARTS = ("one-at-a-time", "factorial", "grouped")
#: the files of every figure (dataset, Findings and simulation figures alike): the picture
#: (the report shows it), its print version, and its source data, one row per drawn mark
#: (journals ask for it; :func:`modelvar.plots.common.drawn_marks`); the picture first
FORMATS = ("png", "pdf", "csv")
#: the tables a dataset figure can read (``RESULTS/aggregated/<table>/dataset=D/…``)
TABLES = ("summary", "agreement", "runs", "disparities")


@dataclass(frozen=True)
class FigureSpec:
    """One dataset figure: its ``name`` (files ``RESULTS/<dataset>/figures/<name>.<format>``,
    :data:`FORMATS`;
    caption ``workflow/report/<name>.rst``), its ``title`` in the report's menu, the
    ``tables`` its function takes (in order), the part of the design whose cells it shows
    (``one-at-a-time``, ``factorial``, or ``grouped``: drawn for datasets with groups, by its
    own rule). It is drawn by the function of the same name in :mod:`modelvar.plots.study`
    (one module, so that the ``figures`` job's code hash covers every figure)."""

    name: str
    title: str
    tables: tuple[str, ...]
    part: str

    def __post_init__(self) -> None:
        if self.part not in PARTS:
            raise ValueError(f"figure {self.name!r}: part must be one of {PARTS}")
        unknown = sorted(set(self.tables) - set(TABLES))
        if unknown:
            raise ValueError(f"figure {self.name!r}: unknown table(s) {unknown}; known: {TABLES}")


#: every dataset figure, in the report's reading order
DATASET_FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec("sources_of_variance", "sources of variance, each alone",
               ("summary", "agreement", "runs"), "one-at-a-time"),
    FigureSpec("accuracy_by_source", "accuracy under each source alone", ("runs",),
               "one-at-a-time"),
    FigureSpec("reproducibility_vs_chance", "global EC against chance", ("summary",),
               "one-at-a-time"),
    FigureSpec("gross_accuracy_grid", "gross accuracies (seed 004)", ("runs",), "factorial"),
    FigureSpec("accuracy_by_data_perturbation", "accuracy by data perturbation", ("runs",),
               "factorial"),
    FigureSpec("repeat_accuracy_ranges", "accuracy ranges within repeats", ("summary",),
               "factorial"),
    FigureSpec("ec_distributions", "error consistency, repeat means", ("summary",), "factorial"),
    FigureSpec("reproducibility_by_cell", "every cell: accuracy, EC, agreement", ("summary",),
               "factorial"),
    FigureSpec("repeat_ec_ranges", "EC ranges within repeats", ("summary",), "factorial"),
    FigureSpec("per_sample_instability", "unstable test samples", ("agreement",), "factorial"),
    FigureSpec("group_disparities", "differences between groups", ("disparities",), "grouped"),
)


def figure(name: str) -> FigureSpec:
    for spec in DATASET_FIGURES:
        if spec.name == name:
            return spec
    raise ValueError(f"unknown figure {name!r}; known: {[f.name for f in DATASET_FIGURES]}")


def figures_of_design(design: str) -> list[str]:
    """The figures of the ``figures`` rule that a design has cells for, in reading order
    (``both`` draws every one; the grouped figure has its own rule)."""
    def drawn(spec: FigureSpec) -> bool:
        if spec.part == "grouped":
            return False
        return design == "both" or spec.part == design

    return [spec.name for spec in DATASET_FIGURES if drawn(spec)]


def tables_of(names) -> tuple[str, ...]:
    """The tables the given figures read, in :data:`TABLES` order."""
    needed = {t for name in names for t in figure(name).tables}
    return tuple(t for t in TABLES if t in needed)
