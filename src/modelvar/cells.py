"""Perturbation cells: one combination of a level from every perturbation family.

A repeat's runs all share one cell; the runs differ because each draws its perturbations from its
own streams. Each family has a "none" level. A cell has a readable, parseable id, used as the
``{cell}`` wildcard and in every output table, e.g. ``down050_seedrun``:

==============  ==========================  =============================================
family          config key                   level ids
==============  ==========================  =============================================
downsample      ``perturbation.downsample``  ``down100`` (none), ``down075``, ``down050`` …
                                             (percent of the training pool, 3 digits)
model seed      ``perturbation.model_seed``  ``seedfix`` (none: one model seed for all runs),
                                             ``seedrun`` (a model seed per run)
==============  ==========================  =============================================

Later families (data, categorical and hyperparameter perturbation) extend :data:`FAMILIES`.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

_DOWN = re.compile(r"^down(\d{3})$")
MODEL_SEED_LEVELS = {"fixed": "seedfix", "per-run": "seedrun"}
FAMILIES = ("downsample", "model_seed")


@dataclass(frozen=True)
class Cell:
    downsample: float = 1.0
    model_seed: str = "fixed"

    def __post_init__(self) -> None:
        if not 0.0 < self.downsample <= 1.0:
            raise ValueError(f"downsample fraction must be in (0, 1], got {self.downsample}")
        pct = self.downsample * 100
        if abs(pct - round(pct)) > 1e-9:
            raise ValueError(f"downsample must be a whole percent, got {self.downsample}")
        if self.model_seed not in MODEL_SEED_LEVELS:
            raise ValueError(
                f"model_seed must be one of {list(MODEL_SEED_LEVELS)}, got {self.model_seed!r}"
            )

    @property
    def id(self) -> str:
        return f"down{round(self.downsample * 100):03d}_{MODEL_SEED_LEVELS[self.model_seed]}"

    def levels(self) -> dict[str, str]:
        """Family → level id, for tables and figure facets."""
        down, seed = self.id.split("_")
        return {"downsample": down, "model_seed": seed}

    @classmethod
    def parse(cls, cell_id: str) -> Cell:
        parts = cell_id.split("_")
        if len(parts) != len(FAMILIES):
            raise ValueError(
                f"cell id {cell_id!r} must have {len(FAMILIES)} parts ({', '.join(FAMILIES)})"
            )
        match = _DOWN.match(parts[0])
        if not match:
            raise ValueError(f"cell id {cell_id!r}: bad downsample level {parts[0]!r}")
        seeds = {v: k for k, v in MODEL_SEED_LEVELS.items()}
        if parts[1] not in seeds:
            raise ValueError(f"cell id {cell_id!r}: bad model-seed level {parts[1]!r}")
        cell = cls(downsample=int(match.group(1)) / 100, model_seed=seeds[parts[1]])
        if cell.id != cell_id:
            raise ValueError(f"cell id {cell_id!r} is not canonical (expected {cell.id!r})")
        return cell


def grid(perturbation: dict) -> list[Cell]:
    """Every cell of the config's ``perturbation`` section (the product of its families)."""
    downs = perturbation.get("downsample", [1.0])
    seeds = perturbation.get("model_seed", ["fixed"])
    cells = [Cell(downsample=d, model_seed=s) for d, s in itertools.product(downs, seeds)]
    ids = [c.id for c in cells]
    if len(set(ids)) != len(ids):
        raise ValueError(f"the perturbation grid repeats cells: {ids}")
    return cells
