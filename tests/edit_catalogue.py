"""A catalogue of realistic edits to a copy of the workflow (issue 54): each changes the
library, a caption or the config the way a user or a developer would, and says which rules'
jobs must run again after it (the ones whose outputs it changes), so that the dry run can be
held against it. ``tests/test_edit_catalogue.py`` applies it to the tiny study,
``benchmarks/bench_edits.py`` to the default one.

An edit is applied to a workflow copy (``tree``: its Snakefile, rules, src/modelvar …) and the
study's config file (``config``: a path, rewritten where the edit is to the config)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

#: the rules that read every fit's outputs, directly or not (what a change to fits reruns)
AFTER_FITS = ("pairwise_metrics", "grouped_metrics", "figures", "group_disparities_figure",
              "findings")
FIGURES = ("figures", "group_disparities_figure", "findings")


@dataclass(frozen=True)
class Edit:
    """One edit: its ``name``, what it does to the tree or config (``apply``), and the rules
    whose jobs may run again after it (``reruns``; every other rule's must not), or None
    where its jobs are new ones of every rule (a dataset, a classifier)."""

    name: str
    apply: Callable[[Path, Path], None]
    reruns: tuple[str, ...] | None


def _replace(tree: Path, rel: str, old: str, new: str, count: int = 1) -> None:
    path = tree / rel
    text = path.read_text()
    if old not in text:
        raise AssertionError(f"{rel} no longer holds {old!r}: update the edit catalogue")
    path.write_text(text.replace(old, new, count))


def _config(edit: Callable[[dict], None]) -> Callable[[Path, Path], None]:
    def apply(tree: Path, config: Path) -> None:
        data = yaml.safe_load(config.read_text())
        edit(data)
        config.write_text(yaml.safe_dump(data, sort_keys=False))

    return apply


def _colour(tree: Path, config: Path) -> None:
    path = tree / "src/modelvar/models/classifiers.py"
    text = path.read_text()
    colour = re.search(r'colour="(#[0-9A-Fa-f]{6})"', text).group(1)
    path.write_text(text.replace(f'colour="{colour}"', 'colour="#123456"', 1))


def _comment(tree: Path, config: Path) -> None:
    path = tree / "src/modelvar/pipeline/fitting.py"
    path.write_text(path.read_text() + "\n# a note for the next person: fits are paired\n")


def _docstring(tree: Path, config: Path) -> None:
    path = tree / "src/modelvar/metrics/pairwise.py"
    text = path.read_text()
    path.write_text(text.replace('"""', '"""(Reworded.) ', 1))


def _caption(tree: Path, config: Path) -> None:
    path = tree / "workflow/report/ec_distributions.rst"
    path.write_text(path.read_text() + "\nA sentence more for the reader.\n")


def _resource_default(tree: Path, config: Path) -> None:
    _replace(tree, "src/modelvar/planning/outputs.py", '"plot": (1, 2000, 20)',
             '"plot": (1, 2500, 20)')


def _findings_wording(tree: Path, config: Path) -> None:
    path = tree / "src/modelvar/findings/report.py"
    text = path.read_text()
    said = next(s for s in ("no source is ranked first", "not told apart") if s in text)
    path.write_text(text.replace(said, said.replace(" ", "  ", 1)))


def _fit_change(tree: Path, config: Path) -> None:
    """A real change to how the SGD classifiers fit: their default regularisation."""
    _replace(tree, "src/modelvar/models/classifiers.py", 'HParam("alpha", "log", 1e-4, ',
             'HParam("alpha", "log", 2e-4, ')


def _new_metric(tree: Path, config: Path) -> None:
    path = tree / "src/modelvar/metrics/registry.py"
    path.write_text(path.read_text() + '''

def _both_right(e):
    """The rate at which both runs are right: (n - U_ij)/n."""
    return e.nan_if_empty(lambda: (e.n - e.union) / e.n)


register(PairwiseMetric("both_right", "rate both right", "errors", _both_right,
                        null=lambda a: a.ai * a.aj, subsets=("all",), source="a new metric"))
''')


def _another_repeat(data: dict) -> None:
    data["split"]["repeats"] += 1


def _another_dataset(data: dict) -> None:
    data["datasets"]["iris"] = {"source": "sklearn"}


def _another_classifier(data: dict) -> None:
    """A built-in classifier the study does not have yet."""
    from modelvar.models.registry import built_in_names

    data["classifiers"] = [*data["classifiers"], next(
        name for name in built_in_names() if name not in data["classifiers"])]


CATALOGUE: tuple[Edit, ...] = (
    Edit("a classifier's colour", _colour, FIGURES),
    Edit("a comment in the fitting code", _comment, ()),
    Edit("a docstring of the metrics", _docstring, ()),
    Edit("a figure's caption", _caption, ()),
    Edit("a resource group's memory default", _resource_default, ()),
    Edit("a findings sentence's wording", _findings_wording, ("findings",)),
    Edit("a real change to the SGD classifiers' fit", _fit_change, ("fit", *AFTER_FITS)),
    Edit("a new pairwise metric", _new_metric, AFTER_FITS),
    Edit("one more repeat", _config(_another_repeat), ("fit", *AFTER_FITS)),
    Edit("one more dataset", _config(_another_dataset), None),
    Edit("one more classifier", _config(_another_classifier), None),
)
