"""Perturbation cells: one combination of a level from every perturbation family.

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
is p = 0.05. Example: ``sig1_cnone_hrel0p1_down050_seedrun``.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

MODEL_SEED_LEVELS = {"fixed": "seedfix", "per-run": "seedrun"}
DATA_KINDS = ("sig", "nn", "rel", "pct", "sd", "rsd")
CAT_KINDS = ("label", "sample", "labelmiss", "samplemiss")
HPARAM_KINDS = ("sig", "rel", "abs")
FAMILIES = ("data", "categorical", "hparam", "downsample", "model_seed")
_NUM = r"(\d+(?:p\d+)?)"
_DATA = re.compile(rf"^(sig|nn|rel|pct|sd|rsd){_NUM}$")
_CAT = re.compile(rf"^(label|sample|labelmiss|samplemiss){_NUM}$")
_HPARAM = re.compile(rf"^h(sig|rel|abs){_NUM}$")
_DOWN = re.compile(r"^down(\d{3})$")


def _num_id(x: float) -> str:
    return f"{x:g}".replace(".", "p")


def _num_parse(text: str) -> float:
    return float(text.replace("p", "."))


@dataclass(frozen=True)
class Cell:
    data: tuple[str, float] | None = None
    categorical: tuple[str, float] | None = None
    hparam: tuple[str, float] | None = None
    downsample: float = 1.0
    model_seed: str = "fixed"

    def __post_init__(self) -> None:
        if self.data is not None:
            kind, value = self.data
            if kind not in DATA_KINDS:
                raise ValueError(f"data perturbation must be one of {DATA_KINDS}, got {kind!r}")
            if kind == "sig" and (value < 0 or int(value) != value):
                raise ValueError(f"significant digit must be a non-negative integer, got {value}")
            if kind in ("nn", "rel", "pct", "sd", "rsd") and not value > 0:
                raise ValueError(f"{kind} parameter must be > 0, got {value}")
        if self.categorical is not None:
            kind, value = self.categorical
            if kind not in CAT_KINDS:
                raise ValueError(
                    f"categorical perturbation must be one of {CAT_KINDS}, got {kind!r}"
                )
            if not 0 < value <= 1:
                raise ValueError(f"categorical perturbation p must be in (0, 1], got {value}")
        if self.hparam is not None:
            kind, value = self.hparam
            if kind not in HPARAM_KINDS:
                raise ValueError(f"hparam perturbation must be one of {HPARAM_KINDS}, got {kind!r}")
            if kind == "sig" and (value < 0 or int(value) != value):
                raise ValueError(f"hparam significant digit must be an integer >= 0, got {value}")
            if kind in ("rel", "abs") and not 0 < value <= 1:
                raise ValueError(f"hparam {kind} p must be in (0, 1], got {value}")
        if not 0.0 < self.downsample <= 1.0:
            raise ValueError(f"downsample fraction must be in (0, 1], got {self.downsample}")
        pct = self.downsample * 100
        if abs(pct - round(pct)) > 1e-9:
            raise ValueError(f"downsample must be a whole percent, got {self.downsample}")
        if self.model_seed not in MODEL_SEED_LEVELS:
            raise ValueError(
                f"model_seed must be one of {list(MODEL_SEED_LEVELS)}, got {self.model_seed!r}"
            )

    def levels(self) -> dict[str, str]:
        """Family → level id, for tables and figure facets."""
        data = "dnone" if self.data is None else f"{self.data[0]}{_num_id(self.data[1])}"
        cat = (
            "cnone" if self.categorical is None
            else f"{self.categorical[0]}{_num_id(self.categorical[1])}"
        )
        hparam = "hnone" if self.hparam is None else f"h{self.hparam[0]}{_num_id(self.hparam[1])}"
        return {
            "data": data,
            "categorical": cat,
            "hparam": hparam,
            "downsample": f"down{round(self.downsample * 100):03d}",
            "model_seed": MODEL_SEED_LEVELS[self.model_seed],
        }

    @property
    def id(self) -> str:
        return "_".join(self.levels().values())

    @classmethod
    def parse(cls, cell_id: str) -> Cell:
        parts = cell_id.split("_")
        if len(parts) != len(FAMILIES):
            raise ValueError(
                f"cell id {cell_id!r} must have {len(FAMILIES)} parts ({', '.join(FAMILIES)})"
            )
        data_id, cat_id, hparam_id, down_id, seed_id = parts
        data = _parse_level(data_id, "dnone", _DATA, "data", cell_id)
        cat = _parse_level(cat_id, "cnone", _CAT, "categorical", cell_id)
        hparam = _parse_level(hparam_id, "hnone", _HPARAM, "hparam", cell_id)
        m = _DOWN.match(down_id)
        if not m:
            raise ValueError(f"cell id {cell_id!r}: bad downsample level {down_id!r}")
        seeds = {v: k for k, v in MODEL_SEED_LEVELS.items()}
        if seed_id not in seeds:
            raise ValueError(f"cell id {cell_id!r}: bad model-seed level {seed_id!r}")
        cell = cls(data=data, categorical=cat, hparam=hparam, downsample=int(m.group(1)) / 100,
                   model_seed=seeds[seed_id])
        if cell.id != cell_id:
            raise ValueError(f"cell id {cell_id!r} is not canonical (expected {cell.id!r})")
        return cell


def _parse_level(level_id: str, none_id: str, pattern: re.Pattern, family: str, cell_id: str):
    if level_id == none_id:
        return None
    m = pattern.match(level_id)
    if not m:
        raise ValueError(f"cell id {cell_id!r}: bad {family} level {level_id!r}")
    return m.group(1), _num_parse(m.group(2))


def _scheme(entry, kinds: tuple[str, ...], family: str):
    """Config entry → (kind, value) or None: ``none``, a one-key mapping like ``{sig: 1}``, or
    for categorical levels ``{label: p, missing: as_level}`` (kind ``labelmiss``)."""
    if entry == "none":
        return None
    if isinstance(entry, dict) and family == "categorical" and "missing" in entry:
        mode = entry["missing"]
        rest = {k: v for k, v in entry.items() if k != "missing"}
        if mode in ("keep", "as_level") and len(rest) == 1:
            (kind, value), = rest.items()
            if kind in ("label", "sample"):
                return (f"{kind}miss" if mode == "as_level" else kind), float(value)
    elif isinstance(entry, dict) and len(entry) == 1:
        (kind, value), = entry.items()
        if kind in kinds and not kind.endswith("miss"):
            return kind, float(value)
    raise ValueError(f"perturbation.{family}: bad level {entry!r}; use 'none' or one of "
                     f"{{{', '.join(f'{k}: value' for k in kinds)}}}")


def grid(perturbation: dict) -> list[Cell]:
    """Every cell of the config's ``perturbation`` section (the product of its families)."""
    datas = [_scheme(e, DATA_KINDS, "data") for e in perturbation.get("data", ["none"])]
    cats = [_scheme(e, CAT_KINDS, "categorical")
            for e in perturbation.get("categorical", ["none"])]
    hparams = [_scheme(e, HPARAM_KINDS, "hparam")
               for e in perturbation.get("hparam", ["none"])]
    downs = perturbation.get("downsample", [1.0])
    seeds = perturbation.get("model_seed", ["fixed"])
    cells = [
        Cell(data=d, categorical=c, hparam=h, downsample=f, model_seed=s)
        for d, c, h, f, s in itertools.product(datas, cats, hparams, downs, seeds)
    ]
    ids = [c.id for c in cells]
    if len(set(ids)) != len(ids):
        raise ValueError(f"the perturbation grid repeats cells: {ids}")
    return cells


# ----------------------------------------------------------------------------- readable labels
FAMILY_NAMES = {"data": "data", "categorical": "categorical", "hparam": "hparam",
                "downsample": "training fraction", "model_seed": "model seed"}
NONE_LEVELS = {"dnone", "cnone", "hnone", "down100", "seedfix"}


def level_value(level_id: str) -> str:
    """A level id without its family: ``rel0p2`` → ``rel 0.2``, ``hsig1`` → ``sig 1``,
    ``labelmiss0p1`` → ``label 0.1 (missing as a level)``, ``down050`` → ``50 %``,
    ``seedrun`` → ``per run``, ``dnone`` → ``none``."""
    if level_id in ("dnone", "cnone", "hnone"):
        return "none"
    if level_id.startswith("down"):
        return f"{int(level_id[4:])} %"
    if level_id.startswith("seed"):
        return {"seedrun": "per run", "seedfix": "fixed"}[level_id]
    body = level_id[1:] if level_id[:4] in ("hsig", "hrel", "habs") else level_id
    kind = body.rstrip("0123456789p")
    value = body[len(kind):].replace("p", ".")
    if kind.endswith("miss"):
        return f"{kind[:-4]} {value} (missing as a level)"
    return f"{kind} {value}"


def level_label(family: str, level_id: str) -> str:
    """A level with its family, as figures and tables say it: ``data rel 0.2``,
    ``hparam none``, ``50 % train``, ``seed per run``."""
    value = level_value(level_id)
    if family == "downsample":
        return f"{value} train"
    if family == "model_seed":
        return f"seed {value}"
    return f"{family} {value}"


def cell_label(cell_id: str, families=FAMILIES) -> str:
    """A cell in words, the given families in order: ``data rel 0.2 · hparam none · 50 % train
    · seed per run`` (pass only the families that vary in a figure)."""
    levels = Cell.parse(cell_id).levels()
    return " · ".join(level_label(f, levels[f]) for f in families)
