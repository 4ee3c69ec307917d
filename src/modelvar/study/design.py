"""The study design of one dataset: which perturbation cells are fitted.

**Designs** (config ``design``):

* ``factorial``: every combination of one level per family (seed 004's grid);
* ``one-at-a-time``: the **control** cell — every family at its control level (no data,
  categorical or hparam perturbation, training fraction 1.0, one fixed model seed), where a
  deterministic classifier's runs coincide — and each source alone: one family at each of its
  other levels, the rest at control;
* ``both``: the factorial grid plus the control and one-at-a-time cells it lacks (the grid of a
  study whose model seed varies per run does not contain the control, nor the sources alone).

The one-at-a-time cells answer "how much does this source alone move accuracy and
predictions", against the control's zero; the factorial grid shows interactions.

**No-op families.** A family that cannot act on a dataset collapses to ``none`` for it: one
whose reach (:mod:`modelvar.study.families`) the dataset lacks — the categorical family on
a dataset without categorical features, the data family on one without numeric features. Its
levels would only give byte-identical copies of the ``none`` cells (wasted fits, and pooled
figures counting each repeat twice). :func:`dataset_cells` returns the collapsed families so
that the workflow warns once and the report says so. A classifier that takes no model seed (a
declared one without ``seed_param``) is the same model with a seed per run as with a fixed
one: for it the model-seed family collapses to ``fixed`` in the same way.

**The design, decided once.** :func:`classifier_design` decides the cells of one dataset ×
classifier, the role of each (:func:`cell_roles`) and the families collapsed for it; the plan
(:mod:`modelvar.planning.plan`) calls it for every dataset × classifier and the workflow writes
each dataset's :class:`DatasetDesign` to a file (``design/NAME.json``) that the
figures and findings jobs read. No job derives cells or roles from the config again, so what
the plan fitted is what every figure, table and sentence shows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from modelvar.study import families
from modelvar.study.cells import Cell, grid

DESIGNS = ("factorial", "one-at-a-time", "both")


def control() -> Cell:
    """The control cell: every family at its control level."""
    return Cell()


@dataclass(frozen=True)
class Reach:
    """Which perturbation families can act on a dataset (``None``: not known yet)."""

    numeric: bool | None = True
    categorical: bool | None = True


def collapsed_families(perturbation: dict, reach: Reach) -> list[str]:
    """Families with levels beyond their control that cannot act on the dataset (it lacks the
    feature type the family needs)."""
    out = []
    for family in families.families():
        if family.reach is None or getattr(reach, family.reach) is not False:
            continue
        entries = perturbation.get(family.name, [family.levels.default_entry])
        if any(family.from_config(e) != family.none for e in entries):
            out.append(family.name)
    return out


def _one_at_a_time(cells: list[Cell]) -> list[Cell]:
    """The control and every level of every family alone, from the levels the grid uses."""
    out = [control()]
    for family in families.names():
        for level in dict.fromkeys(c[family] for c in cells):
            if level != families.family(family).none:
                out.append(Cell(**{family: level}))
    return out


def dataset_cells(perturbation: dict, design: str = "factorial",
                  reach: Reach = Reach()) -> tuple[list[Cell], list[str]]:
    """(cells, collapsed families) of one dataset: the design's cells, every family the dataset
    cannot be perturbed by collapsed to ``none``. Cells come in grid order, one-at-a-time
    additions after the factorial ones, without duplicates.

    Worked out once per process for the same levels, design, reach and registered families
    (cells are immutable): the plan asks for every dataset × classifier, three times each for
    the cells' roles, and the grid is the same for most of them."""
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
    try:
        key = (json.dumps(perturbation, sort_keys=True), design, reach, families.families())
    except TypeError:  # levels JSON cannot write: worked out each time
        return _dataset_cells(perturbation, design, reach)
    found = _CELLS.get(key)
    if found is None:
        if len(_CELLS) >= _CELLS_KEPT:
            _CELLS.clear()
        cells, collapsed = _dataset_cells(perturbation, design, reach)
        found = _CELLS[key] = (tuple(cells), tuple(collapsed))
    return list(found[0]), list(found[1])


#: :func:`dataset_cells` of the levels, design, reach and families this process asked for
_CELLS: dict[tuple, tuple[tuple[Cell, ...], tuple[str, ...]]] = {}
_CELLS_KEPT = 256


def _dataset_cells(perturbation: dict, design: str,
                   reach: Reach) -> tuple[list[Cell], list[str]]:
    """:func:`dataset_cells`, worked out."""
    collapsed = collapsed_families(perturbation, reach)
    effective = {**perturbation, **{name: [families.family(name).levels.default_entry]
                                    for name in collapsed}}
    factorial = grid(effective)
    if design == "factorial":
        cells = factorial
    elif design == "one-at-a-time":
        cells = _one_at_a_time(factorial)
    else:
        cells = [*factorial, *_one_at_a_time(factorial)]
    return list(dict.fromkeys(cells)), collapsed


def active_sources(cell: Cell) -> list[str]:
    """The families a cell perturbs (away from the control), e.g. ``["data", "model_seed"]``."""
    return [f.name for f in families.families() if cell[f.name] != f.none]


ROLES = ("factorial", "one-at-a-time")


def cell_roles(perturbation: dict, design: str = "factorial",
               reach: Reach = Reach()) -> dict[str, tuple[str, ...]]:
    """Cell id → the parts of the design it belongs to (``factorial``, ``one-at-a-time``), for
    the cells a dataset gets: which cells figures and findings compare."""
    cells, _ = dataset_cells(perturbation, design, reach)
    factorial = {c.id for c in dataset_cells(perturbation, "factorial", reach)[0]} \
        if design != "one-at-a-time" else set()
    oat = {c.id for c in dataset_cells(perturbation, "one-at-a-time", reach)[0]} \
        if design != "factorial" else set()
    return {c.id: tuple(r for r, members in zip(ROLES, (factorial, oat), strict=True)
                        if c.id in members) for c in cells}


def reach_of(meta: dict) -> Reach:
    """Which families can act on a prepared dataset (its metadata's feature types)."""
    types = {f["type"] for f in meta["features"]}
    return Reach(numeric="numeric" in types, categorical="categorical" in types)


@dataclass(frozen=True)
class ClassifierDesign:
    """One dataset × classifier's cells in the plan's order, each cell's roles, and the
    families collapsed for it (the dataset cannot be perturbed by them, or the classifier
    takes no model seed)."""

    cells: tuple[str, ...]
    roles: dict[str, tuple[str, ...]]
    collapsed: tuple[str, ...] = ()

    def of_role(self, role: str) -> set[str]:
        """The cells with ``role`` (``factorial``, ``one-at-a-time``)."""
        return {c for c, r in self.roles.items() if role in r}


def classifier_design(perturbation: dict, design: str, reach: Reach,
                      seeded: bool = True) -> ClassifierDesign:
    """The design of one dataset × classifier (module docstring): :func:`dataset_cells` and
    :func:`cell_roles` of the config's levels, the model-seed family collapsed to ``fixed``
    for a classifier that takes no seed."""
    cells, collapsed = dataset_cells(perturbation, design, reach)
    if not seeded and any(c.model_seed != "fixed" for c in cells):
        perturbation = {**perturbation, "model_seed": ["fixed"]}
        cells, collapsed = dataset_cells(perturbation, design, reach)
        collapsed = [*collapsed, "model_seed"]
    return ClassifierDesign(tuple(c.id for c in cells),
                            cell_roles(perturbation, design, reach), tuple(collapsed))


@dataclass(frozen=True)
class DatasetDesign:
    """The design of one dataset: per classifier (in the study's order), its
    :class:`ClassifierDesign`; written by the workflow and read by the figures and findings
    jobs (:meth:`to_json`, :meth:`from_json`)."""

    dataset: str
    classifiers: dict[str, ClassifierDesign]

    def to_json(self) -> str:
        return json.dumps({"dataset": self.dataset, "classifiers": {
            name: {"cells": list(d.cells), "roles": {c: list(r) for c, r in d.roles.items()},
                   "collapsed": list(d.collapsed)}
            for name, d in self.classifiers.items()}}, sort_keys=False)

    @classmethod
    def from_json(cls, text: str) -> DatasetDesign:
        body = json.loads(text)
        return cls(body["dataset"], {
            name: ClassifierDesign(tuple(d["cells"]),
                                   {c: tuple(r) for c, r in d["roles"].items()},
                                   tuple(d["collapsed"]))
            for name, d in body["classifiers"].items()})

    def roles(self) -> dict[str, dict[str, tuple[str, ...]]]:
        """Classifier → cell id → its roles."""
        return {name: d.roles for name, d in self.classifiers.items()}


def read_designs(paths) -> dict[str, DatasetDesign]:
    """Every dataset's design from its file, by dataset."""
    from pathlib import Path

    out = {}
    for path in paths:
        d = DatasetDesign.from_json(Path(path).read_text())
        out[d.dataset] = d
    return out


def study_roles(designs: dict[str, DatasetDesign]) -> dict[tuple[str, str],
                                                             dict[str, tuple[str, ...]]]:
    """(dataset, classifier) → cell id → its roles, over every dataset's design."""
    return {(name, clf): d.roles for name, design in designs.items()
            for clf, d in design.classifiers.items()}
