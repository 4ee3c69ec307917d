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
that the workflow warns once and the report says so.
"""

from __future__ import annotations

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
    additions after the factorial ones, without duplicates."""
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
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
