"""Perturbation cells: one combination of a level from every perturbation family
(:mod:`modelvar.study.families`, the registry this module reads).

A repeat's runs all share one cell; the runs differ because each draws its perturbations from its
own streams. Every family has a "none" level. A cell has a readable, parseable id — the
``{cell}`` wildcard and a column of every output table — made of one level id per family, in this
order (families cheap to vary last), joined by ``_``:

============  ==============================  ====================================================
family        config key                       level ids
============  ==============================  ====================================================
data          ``perturbation.data``            ``dnone``; ``sig<d>`` (significant digit d);
                                               ``nn<c>`` (nearest neighbour, scale c);
                                               ``rel<p>`` (relative); ``pct<p>`` (percentile);
                                               ``sd<s>``, ``rsd<s>`` (s training SDs)
categorical   ``perturbation.categorical``     ``cnone``; ``label<p>``; ``sample<p>``;
                                               ``labelmiss<p>``, ``samplemiss<p>`` (the missing
                                               value is one more level)
hparam        ``perturbation.hparam``          ``hnone``; ``hsig<d>``; ``hrel<p>``; ``habs<p>``
                                               (:mod:`modelvar.models.hparams`)
downsample    ``perturbation.downsample``      ``down100`` (none), ``down075``, ``down050`` …
model seed    ``perturbation.model_seed``      ``seedfix`` (none), ``seedrun``
============  ==============================  ====================================================

Numbers in ids are written with ``p`` for the decimal point: ``nn0p5`` is c = 0.5, ``label0p05``
is p = 0.05. Example: ``sig1_cnone_hrel0p1_down050_seedrun``. (The table lists the built-in
families; a registered family adds its part where it is registered.)
"""

from __future__ import annotations

import functools
import itertools

from modelvar.study import families as registry

#: the stages (:attr:`modelvar.study.families.Family.stage`) of the families in a cell's chunk
CHUNK_STAGES = ("training rows", "hparams")


class Cell:
    """One level per family: ``Cell(data=("rel", 0.2), downsample=0.5)``; a family not given is
    at its control level. Levels are read as attributes (``cell.data``) or by
    ``cell[family]``; cells are immutable and hashable."""

    __slots__ = ("_levels", "_id", "_chunk")

    def __init__(self, **levels) -> None:
        unknown = sorted(set(levels) - set(registry.names()))
        if unknown:
            raise ValueError(f"unknown perturbation family {unknown}; known: "
                             f"{list(registry.names())}")
        resolved = {}
        for family in registry.families():
            level = levels.get(family.name, family.none)
            if isinstance(level, list):
                level = tuple(level)
            family.check(level)
            resolved[family.name] = level
        object.__setattr__(self, "_levels", resolved)

    def __getattr__(self, name: str):
        try:
            return object.__getattribute__(self, "_levels")[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, family: str):
        return self._levels[family]

    def __setattr__(self, name, value) -> None:
        raise AttributeError("a Cell is immutable")

    def __eq__(self, other) -> bool:
        return isinstance(other, Cell) and self._levels == other._levels

    def __hash__(self) -> int:
        return hash(tuple(self._levels.items()))

    def __reduce__(self):
        return (_cell, (dict(self._levels),))

    def __repr__(self) -> str:
        return f"Cell({self.id})"

    def levels(self) -> dict[str, str]:
        """Family → level id, for tables and figure facets."""
        return {name: registry.family(name).to_id(level) for name, level in self._levels.items()}

    @property
    def id(self) -> str:
        """The level ids joined by ``_`` (module docstring); worked out once per cell (the plan
        of the full study asks ~10,000 times)."""
        try:
            return object.__getattribute__(self, "_id")
        except AttributeError:
            ident = "_".join(self.levels().values())
            object.__setattr__(self, "_id", ident)
            return ident

    @property
    def chunk(self) -> str:
        """The levels that a fit job's cells share: those of the families that change the
        training rows or the hyperparameters (:data:`CHUNK_STAGES`), joined by ``_``; the
        training fraction and the model seed, cheap to vary, are the rest of the id. Worked out
        once per cell, as the id."""
        try:
            return object.__getattribute__(self, "_chunk")
        except AttributeError:
            chunk = "_".join(level for name, level in self.levels().items()
                             if registry.family(name).stage in CHUNK_STAGES)
            object.__setattr__(self, "_chunk", chunk)
            return chunk

    @classmethod
    def parse(cls, cell_id: str) -> Cell:
        parts = cell_id.split("_")
        names = registry.names()
        if len(parts) != len(names):
            raise ValueError(
                f"cell id {cell_id!r} must have {len(names)} parts ({', '.join(names)})")
        levels = {}
        for name, part in zip(names, parts, strict=True):
            try:
                levels[name] = registry.family(name).from_id(part)
            except ValueError as exc:
                raise ValueError(f"cell id {cell_id!r}: {exc}") from None
        cell = cls(**levels)
        if cell.id != cell_id:
            raise ValueError(f"cell id {cell_id!r} is not canonical (expected {cell.id!r})")
        return cell


def _cell(levels: dict) -> Cell:
    return Cell(**levels)


def grid(perturbation: dict) -> list[Cell]:
    """Every cell of the config's ``perturbation`` section (the product of its families' levels;
    a family not given is at its control)."""
    per_family = [
        [family.from_config(entry)
         for entry in perturbation.get(family.name, [family.levels.default_entry])]
        for family in registry.families()]
    names = registry.names()
    cells = [Cell(**dict(zip(names, combo, strict=True)))
             for combo in itertools.product(*per_family)]
    ids = [c.id for c in cells]
    if len(set(ids)) != len(ids):
        raise ValueError(f"the perturbation grid repeats cells: {ids}")
    return cells


# ----------------------------------------------------------------------------- readable labels
def family_of_level(level_id: str) -> registry.Family:
    """The family whose grammar writes ``level_id``."""
    return _family_of_level(level_id, registry.families())


@functools.lru_cache(maxsize=4096)
def _family_of_level(level_id: str, families: tuple) -> registry.Family:
    for family in families:
        if family.owns(level_id):
            return family
    raise ValueError(f"{level_id!r} is no family's level id")


def level_value(level_id: str) -> str:
    """A level id without its family: ``rel0p2`` → ``rel 0.2``, ``hsig1`` → ``sig 1``,
    ``labelmiss0p1`` → ``label 0.1 (missing as a level)``, ``down050`` → ``50 %``,
    ``seedrun`` → ``per run``, ``dnone`` → ``none``."""
    return family_of_level(level_id).words(level_id)


def level_label(family: str, level_id: str) -> str:
    """A level with its family, as figures and tables say it: ``data rel 0.2``,
    ``hparam none``, ``50 % train``, ``seed per run``."""
    return registry.family(family).level_label(level_id)


def cell_label(cell_id: str, families=None) -> str:
    """A cell in words, the given families (default: all) in order: ``data rel 0.2 · hparam
    none · 50 % train · seed per run`` (pass only the families that vary in a figure)."""
    levels = Cell.parse(cell_id).levels()
    return " · ".join(level_label(f, levels[f]) for f in (families or registry.names()))
