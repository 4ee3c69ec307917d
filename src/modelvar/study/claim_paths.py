"""Simulated claims of a sequential study, run round after round by the study's own stopping rule:
what the plan expects a sequential study to spend before it has findings, and what the
calibration (:mod:`modelvar.calibration.sequential`) measures its error rates and power on.

A page is ``effects.size`` claims in blocks (``blocks``: each claim's block). A claim's
per-repeat differences are N(δ, 1) (δ its effect in SDs; or Student's t with ``tails``
degrees of freedom scaled to SD 1), and it has two hypotheses, as a comparison of the page has
(:class:`modelvar.findings.paired.Compared`): no difference (a paired t-test) and a difference
beyond its margin m SDs (two one-sided t-tests). At each look a claim of an open block gets
the two p-values on its first n repeats and their sequential p-values
(:func:`modelvar.study.looks.levels_of`, the smallest over its looks); the page's ``decide``
says which hypotheses hold and the bound each claim faces; each open block then stops or goes
on by :func:`modelvar.study.stopping.conditional_powers` as the study's blocks do. A claim that
holds is judged on its decisive look: called equivalent where its equivalence held, else told
apart with the sign of that look's mean. It is **false** when it calls equivalent a difference
at or beyond its margin, or tells apart a difference that is 0 or has the other sign.

``stop`` is the rule blocks follow: ``"rule"`` (the study's: decided, futile, or the last
look), ``"no futility"`` (the same without the futility rule: what it costs in power), or
``"never"`` (every block to the last look: the worst case for the error rates, since a
sequential p-value only falls with more looks, so every stopping rule's false claims are a
subset of these).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from modelvar.study.looks import levels_of
from modelvar.study.rounds import Futility, Schedule
from modelvar.study.stopping import conditional_powers

#: how blocks stop (module docstring)
STOPS = ("rule", "no futility", "never")
#: the prior's claims (module docstring of :func:`prior_repeats`): effects in SDs of the
#: per-repeat differences, as real pages' undecided and decided comparisons span them
PRIOR_EFFECTS = (0.0, 0.3, 0.5, 0.7, 1.0, 1.5)
#: the prior's equivalence margin in SDs (real pages' comparisons: 0.3 to 1.5, median ≈ 0.5)
PRIOR_MARGIN = 0.5
#: the prior's level for each hypothesis (a Holm family of a few dozen claims: its first bound)
PRIOR_LEVEL = 0.05 / 36


@dataclass(frozen=True)
class Paths:
    """Simulated pages (rows) and claims or blocks (columns): whether each claim holds, is
    called equivalent, its sign and whether it is false; the repeats each block used."""

    holds: np.ndarray
    equivalent: np.ndarray
    false: np.ndarray
    repeats: np.ndarray


def _noise(rng: np.random.Generator, shape: tuple[int, int], tails: float | None):
    if tails is None:
        return rng.standard_normal(shape)
    return rng.standard_t(tails, shape) / np.sqrt(tails / (tails - 2))


def _tests(x: np.ndarray, n: int, margin: np.ndarray):
    """Each claim's paired t-test p, two one-sided tests' p of |mean| < margin, mean and SD on
    its first ``n`` repeats."""
    from scipy.stats import t as student

    part = x[:, :n]
    mean, sd = part.mean(axis=1), part.std(axis=1, ddof=1)
    se = sd / np.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_diff = 2 * student.sf(np.abs(mean) / se, n - 1)
        p_eq = np.maximum(student.sf((mean + margin) / se, n - 1),
                          student.cdf((mean - margin) / se, n - 1))
    return p_diff, p_eq, mean, sd


def simulate(effects, margins, blocks, schedule: Schedule, futility: Futility, *,
             decide: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], pages: int,
             rng: np.random.Generator, stop: str = "rule", tails: float | None = None,
             levels: Callable = levels_of) -> Paths:
    """Pages of claims run by the stopping rule (module docstring). ``decide`` maps the
    sequential p-values (claims × 2: no difference, equivalence) to which hold (claims × 2)
    and each hypothesis's bound (claims × 2); ``levels(p, n, looks)`` gives the level each
    look rejects a p-value at (the exact boundaries'; a benchmark compares another)."""
    if stop not in STOPS:
        raise ValueError(f"stop {stop!r} is none of {STOPS}")
    effects, margins = np.asarray(effects, float), np.asarray(margins, float)
    blocks = np.asarray(blocks, int)
    looks = schedule.looks()
    n_blocks = int(blocks.max()) + 1
    out = {k: [] for k in ("holds", "equivalent", "false", "repeats")}
    for _ in range(pages):
        x = effects[:, None] + _noise(rng, (effects.size, schedule.max), tails)
        star = np.full((effects.size, 2), np.inf)
        at = np.full((effects.size, len(looks), 2), np.inf)  # each look's level
        means = np.zeros((effects.size, len(looks)))
        open_ = np.ones(n_blocks, bool)
        used = np.full(n_blocks, looks[0])
        for k, n in enumerate(looks):
            active = open_[blocks]
            p_diff, p_eq, mean, sd = _tests(x, n, margins)
            level = np.column_stack([levels(p_diff, n, looks, schedule.spending),
                                     levels(p_eq, n, looks, schedule.spending)])
            level = np.where(active[:, None] & np.isfinite(level), level, np.inf)
            at[:, k], means[:, k] = level, mean
            star = np.minimum(star, level)
            held, bound = decide(np.minimum(star, 1.0))
            holds = held.any(axis=1)
            if n == looks[-1]:
                break
            with np.errstate(divide="ignore", invalid="ignore"):
                power = conditional_powers(
                    effect=np.abs(mean) / sd, room=(margins - np.abs(mean)) / sd,
                    margin=margins / sd, p_look=p_diff, n=n,
                    level=np.nanmin(bound, axis=1), schedule=schedule, futility=futility)
            for b in np.flatnonzero(open_):
                mine = (blocks == b) & ~holds
                if stop == "never":
                    go_on = True
                elif stop == "no futility":
                    go_on = mine.any()
                else:
                    go_on = (mine & (power >= futility.below)).any()
                if go_on:
                    used[b] = schedule.next(n)
                else:
                    open_[b] = False
            if not open_.any():
                break
        equivalent = held[:, 1]
        # the decisive look: the first at which a hypothesis that holds crossed its bound
        told = held[:, 0] & ~equivalent
        first = np.argmax(at[:, :, 0] <= bound[:, None, 0] * (1 + 1e-9), axis=1)
        sign = np.sign(means[np.arange(effects.size), first])
        false = np.where(equivalent, np.abs(effects) >= margins,
                         told & ((effects == 0) | (sign != np.sign(effects))))
        out["holds"].append(holds)
        out["equivalent"].append(equivalent)
        out["false"].append(false & holds)
        out["repeats"].append(used.copy())
    return Paths(*(np.array(out[k]) for k in ("holds", "equivalent", "false", "repeats")))


def _bonferroni(level: float):
    def decide(star: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        bound = np.full(star.shape, level)
        return star <= bound, bound
    return decide


def prior_repeats(schedule: Schedule, futility: Futility | None = None, *, pages: int = 100,
                  claims_per_block: int = 3) -> float:
    """The mean repeats per block a sequential study of ``schedule`` takes before it has
    findings to go by: blocks of ``claims_per_block`` claims of each effect of
    :data:`PRIOR_EFFECTS` at the margin :data:`PRIOR_MARGIN`, every hypothesis at
    :data:`PRIOR_LEVEL`, stopped by the study's rule (a named seed: the same prior on every
    machine)."""
    from modelvar.seeding import stream

    effects = np.repeat(PRIOR_EFFECTS, claims_per_block)
    blocks = np.repeat(np.arange(len(PRIOR_EFFECTS)), claims_per_block)
    rng = stream(0, "sequential-prior",
                 scheme=",".join(map(str, schedule.looks())) + f" {schedule.spending}").generator()
    paths = simulate(effects, np.full(effects.size, PRIOR_MARGIN), blocks, schedule,
                     futility or Futility(), decide=_bonferroni(PRIOR_LEVEL), pages=pages,
                     rng=rng)
    return float(paths.repeats.mean())
