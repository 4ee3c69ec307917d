"""Hyperparameter spaces (as data) and hyperparameter perturbation (seed 004).

A space is a tuple of :class:`HParam`: ``continuous`` (linear), ``log`` (log-scale continuous),
``ordinal`` (integers), ``log-ordinal`` (integers on a log scale: perturbed and sampled as
``log``, then rounded as ordinals) or ``categorical`` (choices), with bounds and the default.
Each classifier declares its space in its spec (:mod:`modelvar.models.spec`; the built-ins' in
:mod:`modelvar.models.classifiers`, a user's in the config: :mod:`modelvar.models.user`).

Perturbation schemes, applied per run to the base values (defaults or tuned), from the stream
``(hparam-perturbation, dataset, classifier, scheme, repeat, run)``:

* ``sig<d>`` — significant digit d: θ = m·10^E, θ' = θ + U(−10^(E−d), 10^(E−d)) (as for data,
  in linear space also for log-scale parameters).
* ``rel<p>`` — relative: linear parameters θ' = θ·(1 + U(−p, p)); log-scale parameters are
  perturbed in log space, log10 θ' = log10 θ + U(−p, p), i.e. multiplied by 10^U(−p, p). The
  seed's log-scale formula, U((1 − p) log10 θ, (1 + p) log10 θ), has a width proportional to
  |log10 θ|, so θ = 1 never moves; ours moves every value by up to p decades.
* ``abs<p>`` — absolute: θ' = θ + U(−p·W, p·W), W the width of the range (in decades for
  log-scale parameters, in log space).

**Bounds: reflected, not clipped.** A value pushed past a bound is reflected back into the range
(θ = hi + ε becomes hi − ε; in log10 space for log-scale parameters), so no probability piles up
on the bounds: with clipping, half of the draws of a parameter whose default sits on a bound (xgb's
``subsample = 1``, ``alpha = 1e-10``) were the bound itself. **Zero** has no magnitude for ``sig``
and ``rel`` to scale (``rel`` would never move it): a zero value is perturbed as if its magnitude
were the width W of its range (``rel``: θ' = U(−p, p)·W; ``sig<d>``: θ' = U(−1, 1)·10^(⌊log10 W⌋
− d)), then reflected. **Ordinals** are perturbed as continuous values, reflected, then rounded
*stochastically* (up with probability equal to the fractional part), so a perturbation smaller
than one step still moves the parameter in proportion to its size instead of always rounding
back (``max_depth = 6`` under ``rel 0.1`` moved in 17 % of draws with plain rounding; its
expected shift is now kept). **Categoricals** (seed 004's note: a per-run probability of 0.1–0.2
leaves them unchanged in most runs of a repeat): in every perturbed repeat, ⌈p·k⌉ of its k runs
(at least one, chosen from the repeat-level stream ``(hparam-categorical, …, repeat)``) each
resample *one* uniformly chosen categorical hyperparameter to a different choice. So the
probability is scaled by the number of runs (⌈p·k⌉ runs, not p·k in expectation) and by the
number of categorical hyperparameters (one of them per chosen run), and every perturbed repeat
really varies its categoricals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

KINDS = ("continuous", "log", "ordinal", "log-ordinal", "categorical")
#: kinds on a log scale, and kinds that take whole numbers
LOG_SCALE, WHOLE = ("log", "log-ordinal"), ("ordinal", "log-ordinal")
SCHEMES = ("sig", "rel", "abs")


@dataclass(frozen=True)
class HParam:
    name: str
    kind: str
    default: object
    low: float | None = None
    high: float | None = None
    choices: tuple = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind must be one of {KINDS}")
        if self.kind == "categorical":
            if self.default not in self.choices:
                raise ValueError(f"{self.name}: default {self.default!r} not among choices")
        else:
            if not (self.low <= self.default <= self.high):
                raise ValueError(f"{self.name}: default {self.default} outside bounds")
            if self.kind in LOG_SCALE and self.low <= 0:
                raise ValueError(f"{self.name}: log-scale bounds must be > 0")

    def problem(self, value) -> str | None:
        """Why ``value`` is not a value of this hyperparameter (not among its choices, not a
        number, outside its bounds, not whole where it must be), or None."""
        if self.kind == "categorical":
            return None if value in self.choices else (
                f"{value!r} is not one of {list(self.choices)}")
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
            return f"{value!r} is not a number"
        if not self.low <= value <= self.high:
            return f"{value} is outside [{self.low:g}, {self.high:g}]"
        if self.kind in WHOLE and value != int(value):
            return f"{value} must be a whole number"
        return None

    def within(self, value: float) -> float:
        """``value`` clamped to [low, high]: a log-scale draw is ``10 ** x``, and
        ``10 ** log10(b)`` may miss a bound b by an ulp (20.000000000000004 for 20)."""
        return min(max(value, self.low), self.high)

    def sample(self, rng: np.random.Generator):
        """A uniform draw (log-uniform for log scale), for random search."""
        if self.kind == "categorical":
            return self.choices[int(rng.integers(len(self.choices)))]
        if self.kind == "log":
            return float(self.within(10 ** rng.uniform(math.log10(self.low),
                                                       math.log10(self.high))))
        if self.kind == "log-ordinal":  # log-uniform over [low, high + 1), rounded down
            value = 10 ** rng.uniform(math.log10(self.low), math.log10(self.high + 1))
            return int(min(max(math.floor(value), int(self.low)), int(self.high)))
        if self.kind == "ordinal":
            return int(rng.integers(int(self.low), int(self.high) + 1))
        return float(rng.uniform(self.low, self.high))


def defaults(space: tuple[HParam, ...]) -> dict:
    """The base hyperparameters of a space: each one's default."""
    return {h.name: h.default for h in space}


def reflect(value: float, low: float, high: float) -> float:
    """``value`` folded into [low, high] by reflection at the bounds (a triangle wave, so any
    distance past a bound comes back, however far)."""
    width = high - low
    if width <= 0:
        return low
    t = (value - low) % (2 * width)
    return low + (2 * width - t if t > width else t)


def _sig(value: float, d: int, magnitude: float, rng) -> float:
    width = 10.0 ** (math.floor(math.log10(magnitude)) - d)
    return value + rng.uniform(-width, width)


def perturb_numeric(h: HParam, value: float, scheme: str, p: float, rng) -> float:
    """One numeric hyperparameter under a scheme (see module docstring): perturbed, reflected
    into its bounds, and for ordinals rounded stochastically."""
    if scheme not in SCHEMES:
        raise ValueError(f"hparam scheme must be one of {SCHEMES}, got {scheme!r}")
    value, width = float(value), float(h.high - h.low)
    if h.kind in LOG_SCALE and scheme != "sig":  # rel, abs: in log10 space
        t, lo, hi = math.log10(value), math.log10(h.low), math.log10(h.high)
        step = p if scheme == "rel" else p * (hi - lo)
        new = h.within(10 ** reflect(t + rng.uniform(-step, step), lo, hi))
        return float(new) if h.kind == "log" else _round_stochastically(new, h, rng)
    if scheme == "sig":
        new = _sig(value, int(p), abs(value) if value != 0 else width, rng)
    elif scheme == "rel":
        new = value * (1 + rng.uniform(-p, p)) if value != 0 else rng.uniform(-p, p) * width
    else:
        new = value + rng.uniform(-p, p) * width
    new = reflect(new, float(h.low), float(h.high))
    if h.kind in WHOLE:
        return _round_stochastically(new, h, rng)
    return float(new)


def _round_stochastically(value: float, h: HParam, rng) -> int:
    """Up with probability equal to the fractional part, kept within the bounds."""
    floor = math.floor(value)
    return int(min(max(floor + (rng.random() < value - floor), int(h.low)), int(h.high)))


def categorical_runs(n_runs: int, p: float, rng) -> np.ndarray:
    """The ⌈p·k⌉ runs (at least one) of a repeat whose categorical hparams are resampled."""
    count = min(n_runs, max(1, math.ceil(p * n_runs)))
    return np.sort(rng.choice(n_runs, size=count, replace=False))


def perturb(
    space: tuple[HParam, ...],
    base: dict,
    scheme: str,
    p: float,
    rng: np.random.Generator,
    *,
    resample_categorical: bool,
) -> dict:
    """Perturb every numeric hparam of ``base`` (values of ``space``); if
    ``resample_categorical``, also change one uniformly chosen categorical hparam to a different
    choice."""
    out = dict(base)
    cats = []
    for h in space:
        if h.kind == "categorical":
            cats.append(h)
        else:
            out[h.name] = perturb_numeric(h, base[h.name], scheme, p, rng)
    if resample_categorical and cats:
        h = cats[int(rng.integers(len(cats)))]
        others = [c for c in h.choices if c != base[h.name]]
        out[h.name] = others[int(rng.integers(len(others)))]
    return out
