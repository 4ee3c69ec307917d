"""The perturbation families, each declared once: the registry that cells, the config schema,
the fit job, the metric tables, the figures and the findings read.

A **family** is one source of run-to-run variation (seed 004: downsampling, data noise,
categorical noise, hyperparameter perturbation; and the model seed). Its :class:`Family` entry
says everything the pipeline needs to know about it:

* its **config key** ``perturbation.<name>``, which is also its column in every table and its
  part of a cell id (in the registry's order: families cheap to vary last);
* its **level grammar**: the JSON Schema of one config entry (checked with every other config
  problem before any job, :mod:`modelvar.planning.config_check`), how an entry becomes a level,
  how a level is checked, written as an id (``rel0p2``) and read back, and said in words
  (``rel 0.2``);
* its **control** level (``none``, a fraction of 1, a fixed seed) and its config default;
* its **reach**: the feature type it needs on a dataset (``numeric``, ``categorical``; ``None``:
  any dataset). Where a dataset lacks it, the family collapses to its control
  (:mod:`modelvar.study.design`);
* for a family that perturbs the **training rows**, its ``perturb`` function
  (:class:`TrainingRows`, level, random generator) → (rows, record), drawn from the stream
  ``<name>-perturbation`` of (dataset, level, repeat, run); and its **realised-strength**
  columns (:class:`Strength`): which numbers of the record go into the runs table, the sources
  table and the strength table;
* its **findings label**: ``title`` for panels and components, ``label`` for a level
  (``data rel 0.2``, ``50 % train``, ``seed per run``).

The training-fraction and model-seed families act where the fit job draws the training rows and
the model seed, and the hparam family where it realises the hyperparameters
(:mod:`modelvar.pipeline.fitting`); a new family perturbs the training rows. Adding one is one
entry in :data:`BUILT_IN` (or :func:`register`) plus its function: docs/developing.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

_NUMBER = r"(\d+(?:p\d+)?)"


def number_id(x: float) -> str:
    """A number in an id: ``0.05`` → ``0p05`` (no ``.``: ids are file names and wildcards)."""
    return f"{x:g}".replace(".", "p")


def number_of(text: str) -> float:
    return float(text.replace("p", "."))


@dataclass(frozen=True)
class Bound:
    """The values a kind's parameter may take: ``low < x`` (or ``low <= x`` when not
    ``low_open``), ``x <= high`` (or ``<`` when ``high_open``), an integer when ``integer``."""

    low: float = 0.0
    high: float = 1.0
    low_open: bool = True
    high_open: bool = False
    integer: bool = False

    def schema(self) -> dict:
        out: dict = {"type": "integer" if self.integer else "number"}
        out["exclusiveMinimum" if self.low_open else "minimum"] = self.low
        out["exclusiveMaximum" if self.high_open else "maximum"] = self.high
        return out

    def problem(self, value: float) -> str | None:
        low_ok = value > self.low if self.low_open else value >= self.low
        high_ok = value < self.high if self.high_open else value <= self.high
        if self.integer and int(value) != value:
            return "an integer"
        if not (low_ok and high_ok):
            return (f"in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}"
                    f"{')' if self.high_open else ']'}")
        return None


@dataclass(frozen=True)
class Strength:
    """One realised-strength number of a training-rows family: ``record_key`` of the record
    its ``perturb`` returns goes into the runs table as ``column`` (0 where the family did not
    act), into the sources table as ``sources`` and into the strength table as ``strength``
    (``None``: not there), said with ``unit`` in the report. ``as_json``: a mapping, written
    as JSON (``{}`` where the family did not act) and taken out of the run's perturbation
    record."""

    column: str
    record_key: str
    sources: str | None = None
    strength: str | None = None
    as_json: bool = False
    unit: str = ""


@dataclass
class TrainingRows:
    """The training rows of one run as a training-rows family sees them: ``numeric`` (N × F
    float, missing = NaN) with its ``numeric_columns``, categorical ``codes`` (N × c int,
    −1 = missing) with each feature's ``n_levels``, and the labels ``y`` (N,) as class indices
    of ``n_classes``."""

    numeric: np.ndarray
    codes: np.ndarray
    y: np.ndarray
    numeric_columns: list[str]
    n_levels: list[int]
    n_classes: int


Perturb = Callable[[TrainingRows, Any, np.random.Generator], tuple[TrainingRows, dict]]


@dataclass(frozen=True, eq=False)
class Family:
    """One perturbation family (module docstring). ``levels`` is its grammar
    (:class:`KindLevels`, :class:`FractionLevels`, :class:`ChoiceLevels`)."""

    name: str
    title: str
    levels: Any
    reach: str | None = None
    perturb: Perturb | None = None
    strength: tuple[Strength, ...] = ()
    label: str = "{name} {value}"
    stage: str = "training rows"

    @property
    def none(self):
        return self.levels.none

    @property
    def none_id(self) -> str:
        return self.levels.to_id(self.levels.none)

    def entry_schema(self) -> dict:
        """The JSON Schema of ``perturbation.<name>``: a list of level entries."""
        return {"type": "array", "minItems": 1, "uniqueItems": True,
                "items": self.levels.schema(), "default": [self.levels.default_entry],
                "description": f"{self.title} levels (config/README.md)"}

    def from_config(self, entry):
        """A config entry → a level (checked)."""
        level = self.levels.from_entry(entry, self.name)
        self.check(level)
        return level

    def check(self, level) -> None:
        """Raise ValueError naming the family if ``level`` is not one of its levels."""
        problem = self.levels.problem(level)
        if problem:
            raise ValueError(f"{self.name} perturbation: {problem}")

    def to_id(self, level) -> str:
        return self.levels.to_id(level)

    def from_id(self, level_id: str):
        level = self.levels.from_id(level_id)
        if level is _BAD:
            raise ValueError(f"bad {self.name} level {level_id!r}")
        self.check(level)
        return level

    def owns(self, level_id: str) -> bool:
        """Whether ``level_id`` is written in this family's grammar."""
        return self.levels.from_id(level_id) is not _BAD

    def words(self, level_id: str) -> str:
        """A level id without its family: ``rel0p2`` → ``rel 0.2``, ``down050`` → ``50 %``."""
        return self.levels.words(level_id)

    def level_label(self, level_id: str) -> str:
        """A level with its family, as figures and tables say it: ``data rel 0.2``."""
        return self.label.format(name=self.name, value=self.words(level_id))


_BAD = object()


@dataclass(frozen=True)
class KindLevels:
    """Levels that are ``none`` or (kind, value), from config entries ``{kind: value}``, with ids
    ``<prefix><kind><value>`` (``rel0p2``, ``hsig1``). ``variants`` adds kinds chosen by an
    option of the entry: ``{"missing": {"as_level": "miss"}}`` makes ``{label: 0.1, missing:
    as_level}`` the kind ``labelmiss`` (the option's other values keep the kind)."""

    kinds: Mapping[str, Bound]
    none_id: str
    prefix: str = ""
    variants: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    none = None
    default_entry = "none"

    def __post_init__(self) -> None:
        kinds = "|".join(sorted(self._all_kinds(), key=len, reverse=True))
        object.__setattr__(self, "_id_pattern",
                           re.compile(rf"^{re.escape(self.prefix)}({kinds}){_NUMBER}$"))

    def _all_kinds(self) -> dict[str, Bound]:
        out = dict(self.kinds)
        for mapping in self.variants.values():
            for suffix in mapping.values():
                out.update({f"{k}{suffix}": b for k, b in self.kinds.items()})
        return out

    def schema(self) -> dict:
        options = {option: {"enum": list(mapping)} for option, mapping in self.variants.items()}
        branches: list[dict] = [{"const": "none"}]
        for kind, bound in self.kinds.items():
            branches.append({"type": "object", "additionalProperties": False,
                             "required": [kind], "properties": {kind: bound.schema(), **options}})
        return {"oneOf": branches}

    def from_entry(self, entry, family: str):
        if entry == "none":
            return None
        if isinstance(entry, dict):
            rest = {k: v for k, v in entry.items() if k not in self.variants}
            options_ok = all(entry[o] in m for o, m in self.variants.items() if o in entry)
            if len(rest) == 1 and options_ok:
                (kind, value), = rest.items()
                if kind in self.kinds and isinstance(value, int | float) \
                        and not isinstance(value, bool):
                    for option, mapping in self.variants.items():
                        kind += mapping.get(entry.get(option), "")
                    return kind, float(value)
        raise ValueError(f"perturbation.{family}: bad level {entry!r}; use 'none' or one of "
                         f"{{{', '.join(f'{k}: value' for k in self.kinds)}}}")

    def problem(self, level) -> str | None:
        if level is None:
            return None
        kinds = self._all_kinds()
        if not (isinstance(level, tuple) and len(level) == 2):
            return f"a level is None or (kind, value), got {level!r}"
        kind, value = level
        if kind not in kinds:
            return f"kind must be one of {tuple(kinds)}, got {kind!r}"
        need = kinds[kind].problem(value)
        return f"{kind} must be {need}, got {value:g}" if need else None

    def to_id(self, level) -> str:
        return self.none_id if level is None else f"{self.prefix}{level[0]}{number_id(level[1])}"

    def from_id(self, level_id: str):
        if level_id == self.none_id:
            return None
        m = self._id_pattern.match(level_id)
        return (m.group(1), number_of(m.group(2))) if m else _BAD

    def words(self, level_id: str) -> str:
        level = self.from_id(level_id)
        if level is None:
            return "none"
        kind, value = level
        for option, mapping in self.variants.items():
            for choice, suffix in mapping.items():
                if suffix and kind.endswith(suffix) and kind[: -len(suffix)] in self.kinds:
                    words = "missing as a level" if option == "missing" else f"{option} {choice}"
                    return f"{kind[: -len(suffix)]} {value:g} ({words})"
        return f"{kind} {value:g}"


@dataclass(frozen=True)
class FractionLevels:
    """A fraction in (0, 1], in whole percent: ids ``<prefix>050``; words ``50 %``."""

    prefix: str
    none = 1.0
    default_entry = 1.0

    def schema(self) -> dict:
        return {"type": "number", "exclusiveMinimum": 0, "maximum": 1}

    def from_entry(self, entry, family: str):
        if isinstance(entry, int | float) and not isinstance(entry, bool):
            return float(entry)
        raise ValueError(f"perturbation.{family}: bad level {entry!r}; use a fraction in (0, 1]")

    def problem(self, level) -> str | None:
        if not 0.0 < level <= 1.0:
            return f"fraction must be in (0, 1], got {level}"
        if abs(level * 100 - round(level * 100)) > 1e-9:
            return f"fraction must be a whole percent, got {level}"
        return None

    def to_id(self, level) -> str:
        return f"{self.prefix}{round(level * 100):03d}"

    def from_id(self, level_id: str):
        m = re.match(rf"^{re.escape(self.prefix)}(\d{{3}})$", level_id)
        return int(m.group(1)) / 100 if m else _BAD

    def words(self, level_id: str) -> str:
        return f"{int(level_id[len(self.prefix):])} %"


@dataclass(frozen=True)
class ChoiceLevels:
    """One of a few named levels: config entry → (id, words), the first the control."""

    choices: Mapping[str, tuple[str, str]]

    @property
    def none(self) -> str:
        return next(iter(self.choices))

    @property
    def default_entry(self) -> str:
        return self.none

    def schema(self) -> dict:
        return {"enum": list(self.choices)}

    def from_entry(self, entry, family: str):
        if entry in self.choices:
            return entry
        raise ValueError(f"perturbation.{family}: bad level {entry!r}; use one of "
                         f"{list(self.choices)}")

    def problem(self, level) -> str | None:
        return None if level in self.choices else \
            f"must be one of {list(self.choices)}, got {level!r}"

    def to_id(self, level) -> str:
        return self.choices[level][0]

    def from_id(self, level_id: str):
        return next((k for k, (i, _) in self.choices.items() if i == level_id), _BAD)

    def words(self, level_id: str) -> str:
        return self.choices[self.from_id(level_id)][1]


# ----------------------------------------------------------------------------- the built-ins
def _numeric_noise(rows: TrainingRows, level, rng) -> tuple[TrainingRows, dict]:
    """The data family: seed 004's numeric noise (:mod:`modelvar.data.perturb`), with the
    realised strength per feature recorded under the features' names."""
    from modelvar.data import perturb as p

    kind, value = level
    funcs = {"sig": lambda X, v, g: p.significant_digit(X, int(v), g),
             "nn": p.nearest_neighbour, "rel": p.relative, "pct": p.percentile,
             "sd": p.scaled_noise, "rsd": lambda X, v, g: p.scaled_noise(X, v, g, robust=True)}
    numeric, info = funcs[kind](rows.numeric, value, rng)
    per_feature = info.pop("per_feature", None)
    if per_feature is not None:
        info["per_feature"] = {
            col: [round(c, 4), None if np.isnan(s) else round(s, 4)]
            for col, c, s in zip(rows.numeric_columns, per_feature["changed_frac"],
                                 per_feature["mean_abs_shift_sd"], strict=True)}
    return replace(rows, numeric=numeric), info


def _categorical_noise(rows: TrainingRows, level, rng) -> tuple[TrainingRows, dict]:
    """The categorical family: seed 004's label- and sample-level noise
    (:mod:`modelvar.data.perturb`); kinds ending in ``miss`` treat missing as a level."""
    from modelvar.data import perturb as p

    kind, value = level
    base = kind.removesuffix("miss")
    func = p.categorical_label_level if base == "label" else p.categorical_sample_level
    codes, info = func(rows.codes, rows.n_levels, value, rng,
                       missing="as_level" if kind.endswith("miss") else "keep")
    return replace(rows, codes=codes), info


_POSITIVE = Bound(0.0, 10.0)
BUILT_IN: tuple[Family, ...] = (
    Family(
        "data", "data perturbation",
        KindLevels({"sig": Bound(0, 6, low_open=False, integer=True), "nn": Bound(0, 2),
                    "rel": Bound(0, 1, high_open=True), "pct": Bound(0, 0.5),
                    "sd": _POSITIVE, "rsd": _POSITIVE}, none_id="dnone"),
        reach="numeric", perturb=_numeric_noise,
        strength=(Strength("data_changed_frac", "changed_frac", "data_changed_frac",
                           "numeric_changed_frac", unit="of cells"),
                  Strength("data_mean_abs_shift_sd", "mean_abs_shift_sd", "data_shift_sd",
                           "mean_abs_shift_sd", unit="SD"),
                  Strength("data_per_feature", "per_feature", as_json=True))),
    Family(
        "categorical", "categorical perturbation",
        KindLevels({"label": Bound(0, 1), "sample": Bound(0, 1)}, none_id="cnone",
                   variants={"missing": {"keep": "", "as_level": "miss"}}),
        reach="categorical", perturb=_categorical_noise,
        strength=(Strength("cat_changed_frac", "changed_frac", "cat_changed_frac",
                           "categorical_changed_frac", unit="of cells"),
                  Strength("cat_missing_to_level_frac", "missing_to_level"),
                  Strength("cat_level_to_missing_frac", "level_to_missing"))),
    Family(
        "hparam", "hparam perturbation",
        KindLevels({"sig": Bound(0, 6, low_open=False, integer=True), "rel": Bound(0, 1),
                    "abs": Bound(0, 1)}, none_id="hnone", prefix="h"),
        stage="hparams"),
    Family("downsample", "training fraction", FractionLevels("down"), label="{value} train",
           stage="training pool"),
    Family("model_seed", "model seed",
           ChoiceLevels({"fixed": ("seedfix", "fixed"), "per-run": ("seedrun", "per run")}),
           label="seed {value}", stage="model seed"),
)

_REGISTRY: dict[str, Family] = {f.name: f for f in BUILT_IN}


def families() -> tuple[Family, ...]:
    """Every family, in cell-id order."""
    return tuple(_REGISTRY.values())


def names() -> tuple[str, ...]:
    """Every family's name (config key, table column), in cell-id order."""
    return tuple(_REGISTRY)


def family(name: str) -> Family:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown perturbation family {name!r}; known: {list(_REGISTRY)}") \
            from None


NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


def register(new: Family, *, before: str | None = None) -> Family:
    """Add a family (its place in cell ids: before ``before``, else last). Its name must be a
    lower-case identifier that is no other family's and no table column's; it must perturb
    the training rows, and its level ids must not collide with another family's."""
    if not NAME_PATTERN.match(new.name) or new.name in _REGISTRY \
            or new.name in RESERVED_COLUMNS:
        raise ValueError(f"family name {new.name!r} is taken or not a lower-case identifier")
    if new.stage != "training rows" or new.perturb is None:
        raise ValueError(f"family {new.name!r}: a new family perturbs the training rows; "
                         "give it a perturb function")
    for other in _REGISTRY.values():
        if other.owns(new.none_id) or new.owns(other.none_id):
            raise ValueError(f"family {new.name!r}: its level ids read as {other.name!r}'s")
    items = list(_REGISTRY.items())
    at = next((i for i, (n, _) in enumerate(items) if n == before), len(items))
    items.insert(at, (new.name, new))
    _REGISTRY.clear()
    _REGISTRY.update(items)
    return new


def unregister(name: str) -> None:
    """Remove a registered family (the built-ins stay)."""
    if any(f.name == name for f in BUILT_IN):
        raise ValueError(f"{name!r} is a built-in family")
    _REGISTRY.pop(name, None)


#: columns of the tables that no family may take as its name
RESERVED_COLUMNS = frozenset({"dataset", "classifier", "cell", "repeat", "run", "sample",
                              "subset", "metric", "source", "level", "accuracy"})


def training_rows_families() -> tuple[Family, ...]:
    """The families that perturb the training rows, in the order they are applied."""
    return tuple(f for f in _REGISTRY.values() if f.stage == "training rows")


def strengths() -> tuple[tuple[Family, Strength], ...]:
    """(family, strength) of every realised-strength number, family by family."""
    return tuple((f, s) for f in training_rows_families() for s in f.strength)


def schema_properties() -> dict[str, dict]:
    """``perturbation.<name>`` → its JSON Schema, for every family."""
    return {f.name: f.entry_schema() for f in _REGISTRY.values()}


def defaults() -> dict[str, list]:
    """The config levels of every family when its key is absent: its control only."""
    return {f.name: [f.levels.default_entry] for f in _REGISTRY.values()}
