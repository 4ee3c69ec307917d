"""The Findings page's figures, decided once: asked by the findings rule (its outputs) and the
findings job (what it draws), from the design, the classifiers, the perturbation config and the
number of datasets — never from the plotting stack (loading the workflow imports no
matplotlib). Their files have :data:`modelvar.study.figures.FORMATS`; each is drawn by
:mod:`modelvar.plots.findings` or, for a kind of claim, :mod:`modelvar.plots.verdicts`.
"""

from __future__ import annotations

from collections.abc import Sequence

from modelvar.findings.kinds import DATASETS, kinds
from modelvar.findings.over_datasets import MIN_DATASETS
from modelvar.study import families


def strengths_alone(perturbation: dict) -> dict[str, int]:
    """Per family of the registry, how many of its configured levels are not its control:
    the strengths a one-at-a-time design runs alone."""
    out = {}
    for family in families.families():
        levels = {family.from_config(entry) for entry in perturbation.get(family.name, [])}
        out[family.name] = len(levels - {family.none})
    return out


def dose_figure(design: str, perturbation: dict) -> bool:
    """Whether the findings draw a dose-response figure: some family runs two or more
    strengths alone (the one-at-a-time cells)."""
    return design != "factorial" and max(strengths_alone(perturbation).values(), default=0) >= 2


def verdict_figures(design: str, datasets: int) -> tuple[str, ...]:
    """The figures of the kinds of claim the page states and draws
    (:class:`modelvar.findings.kinds.Drawing`), in the registry's order: those whose table
    the design has cells for; a kind in datasets from
    :data:`~modelvar.findings.over_datasets.MIN_DATASETS` datasets, where the page states
    claims over datasets."""
    def drawn(kind) -> bool:
        if kind.drawn is None or (kind.unit == DATASETS and datasets < MIN_DATASETS):
            return False
        return design == "both" or kind.drawn.part == design

    return tuple(kind.figure for kind in kinds() if drawn(kind))


def findings_figures(design: str, classifiers: Sequence[str], perturbation: dict, *,
                     datasets: int) -> tuple[str, ...]:
    """The findings' figures, in the report's order: the headline sources figure needs the
    one-at-a-time cells; the classifiers' comparison those cells and two classifiers; the
    dose-response figure :func:`dose_figure`; then a figure per kind of claim drawn
    (:func:`verdict_figures`)."""
    alone = design != "factorial"
    return (("sources_of_variance",) if alone else ()) + ("accuracy_vs_reproducibility",) \
        + (("classifier_comparison",) if alone and len(set(classifiers)) > 1 else ()) \
        + (("dose_response",) if dose_figure(design, perturbation) else ()) \
        + verdict_figures(design, datasets)


def caption_file(name: str) -> str:
    """The report's caption of a Findings figure (``workflow/report/<file>``): its own, or the
    one every kind of claim's figure shares (:func:`verdict_figures`)."""
    drawn = {kind.figure for kind in kinds() if kind.drawn is not None}
    return "findings_verdicts.rst" if name in drawn else f"findings_{name}.rst"
