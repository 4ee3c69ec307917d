"""The looks of a sequential study: how much of a claim's error rate each look spends, from the
joint distribution of the looks' statistics (issue 68).

A block of a sequential study is analysed after n_1 < n_2 < … < n_K repeats
(:class:`~modelvar.study.rounds.Schedule`). A claim's test statistic at the look after n_k
repeats, Z_k, shares the first n_j repeats with every earlier look's: on the scale of
information t_k = n_k / n_K the looks are a Brownian motion W observed at t_1 < … < t_K,
Z_k = W(t_k) / √t_k (Jennison & Turnbull 2000, *Group Sequential Methods*, §3.1). A two-sided
test of level α rejects at the first look where |Z_k| ≥ b_k, each b_k found from the joint
distribution of the looks by numerical integration (Armitage, McPherson & Rowe 1969; Jennison &
Turnbull §19.2): the sub-density of W on the continuation region, look by look, on a grid, and
b_k the root of P(|Z_j| < b_j for j < k, |Z_k| ≥ b_k) = f(α, t_k) − f(α, t_{k−1}), f the
schedule's **spending function** (Lan & DeMets 1983): P(reject by the look at t) = f(α, t).
The union bound that spent α linearly over the looks (issue 56) ignored that the looks share
their repeats; for 10 looks it tested every one at about α/10.

**Spending.** Every new schedule spends by Hwang, Shih & DeCani's (1990) family with γ = −3,

    f(α, t) = α (1 − e^{3t}) / (1 − e^{3}),

little at the first looks (1.8 % of α at a tenth of the repeats) and most at the last, like
O'Brien and Fleming's boundaries, but, being proportional to α, the same share of any level:
Lan & DeMets' O'Brien–Fleming-type f(α, t) = 2 − 2Φ(z_{1−α/2}/√t) leaves a claim at a Holm
bound of 0.002 almost nothing before half of its repeats, and a strong effect then runs
needlessly long. Measured per claim against the fixed design of equal power, γ = −3 spends as
few repeats as the O'Brien–Fleming type on effects of 0.5–1 SD and fewer on strong ones
(docs/measurements/sequential.md). A schedule records its spending function (``SPENDINGS``).

**Nominal levels.** A claim's own p-value at look k — a paired t-test's, the two one-sided tests'
of an equivalence, a jackknife's — is compared with the look's *nominal level*
ν_k(α) = 2 (1 − Φ(b_k)): the nominal-significance approach (Jennison & Turnbull §3.4), which
carries the boundaries of the z-scale to any test whose p-value is uniform under its null.

**Small samples.** It is exact for z-statistics; a t-statistic's estimated SD makes the looks'
statistics less alike than the Brownian motion says, and a null then crosses some boundary a
little more often than α (docs/measurements/sequential.md). A simulation done once per schedule
(:func:`t_allowance`: normal paths from a named seed, paired t-tests at the schedule's looks,
the procedure at the levels of :data:`ALLOWANCE_LEVELS`) measures that excess,
c = max rate / α plus two standard errors, and the looks are tested at α / c: the level is
kept for normal differences at the study's own repeat counts; heavier tails make a t-test
more conservative, not less.

**Sequential p-value.** ν_k(α) grows with α, so a hypothesis has the p-value
p* = c · min_k α_k, α_k the level at which look k's nominal level reaches its p-value,
ν_k(α_k) = p_k: the smallest level at which the sequential test would have rejected by now,
P(p* ≤ α) ≤ α under the null whatever look the study stops at (a stop only ends the looks).
It is tabulated once per schedule (:func:`nominal_levels`, log-spaced α) and read back by
interpolation; the page's tiers then decide the p* of every hypothesis as they decide a fixed
study's p-values.

**Reproducible.** The table is rounded to 10 significant digits and c up to a hundredth, so a
machine whose floating point sums in another order computes the same verdicts, bit for bit.
"""

from __future__ import annotations

import functools
import math

import numpy as np

#: the grid of levels the nominal levels are tabulated at (log-spaced; ν is smooth in α on
#: a log-log scale, where it is interpolated)
ALPHAS = np.geomspace(1e-12, 0.9, 81)
#: points of the numerical integration's grid on each look's continuation region (the
#: boundaries agree with a grid of 1,601 points to 1e-4 in z)
GRID_POINTS = 401
#: the levels, null paths and chunk of :func:`t_allowance`'s simulation
ALLOWANCE_LEVELS = (0.2, 0.05)
ALLOWANCE_PATHS = 200_000
ALLOWANCE_CHUNK = 25_000


def obrien_fleming(alpha: float, t: float) -> float:
    """Lan–DeMets' O'Brien–Fleming-type spending, two-sided: f(α, t) = 2 − 2Φ(z_{1−α/2}/√t)."""
    from scipy.stats import norm

    if t <= 0:
        return 0.0
    return float(min(alpha, 2 * norm.sf(norm.isf(alpha / 2) / math.sqrt(t))))


def hwang_shih_decani(alpha: float, t: float, gamma: float = -3.0) -> float:
    """Hwang, Shih & DeCani's (1990) spending: f(α, t) = α (1 − e^{−γt}) / (1 − e^{−γ})."""
    if t <= 0:
        return 0.0
    return float(min(alpha, alpha * math.expm1(-gamma * t) / math.expm1(-gamma)))


#: the spending functions a schedule may record, by name (module docstring)
SPENDINGS = {"Hwang-Shih-DeCani, gamma -3": hwang_shih_decani,
             "O'Brien-Fleming-type": obrien_fleming}
#: the one every new schedule uses (module docstring, "Spending")
SPENDING = "Hwang-Shih-DeCani, gamma -3"


def _spending(name: str):
    try:
        return SPENDINGS[name]
    except KeyError:
        raise ValueError(f"spending function {name!r} is none of {list(SPENDINGS)}") from None


def boundaries(alpha: float, fractions, spending: str = SPENDING) -> np.ndarray:
    """The two-sided z-boundaries b_1..b_K of a test of level ``alpha`` at the information
    ``fractions`` t_1 < … < t_K = 1 (module docstring): b_k such that the probability of
    crossing first at look k is f(α, t_k) − f(α, t_{k−1}), f the ``spending`` function."""
    from scipy.optimize import brentq
    from scipy.special import ndtr, ndtri

    t = np.asarray(fractions, dtype=float)
    if not (np.all(np.diff(t) > 0) and t[0] > 0 and abs(t[-1] - 1.0) < 1e-12):
        raise ValueError(f"information fractions must rise to 1, got {list(t)}")
    spend = _spending(spending)
    spent = np.array([spend(alpha, x) for x in t])
    increments = np.diff(np.concatenate([[0.0], spent]))
    out = np.empty(len(t))
    out[0] = -ndtri(max(increments[0], 1e-300) / 2)
    # the score W(t) on the first continuation region, its density and trapezoid weights
    edge = out[0] * math.sqrt(t[0])
    u = np.linspace(-edge, edge, GRID_POINTS)
    w = np.full(GRID_POINTS, u[1] - u[0])
    w[[0, -1]] /= 2
    density = np.exp(-u ** 2 / (2 * t[0])) / math.sqrt(2 * math.pi * t[0])
    for k in range(1, len(t)):
        step = math.sqrt(t[k] - t[k - 1])
        mass = w * density
        root = math.sqrt(t[k])

        def crossing(b: float, mass=mass, u=u, step=step, root=root) -> float:
            edge_k = b * root
            return float(mass @ (ndtr((-edge_k - u) / step) + ndtr((u - edge_k) / step)))

        target = increments[k]
        if target <= crossing(40.0):  # nothing left to spend: a boundary out of reach
            out[k] = 40.0
        else:
            out[k] = brentq(lambda b, target=target: crossing(b) - target, 1e-6, 40.0,
                            xtol=1e-10)
        edge_k = out[k] * root
        s = np.linspace(-edge_k, edge_k, GRID_POINTS)
        kernel = np.exp(-((s[:, None] - u[None, :]) / step) ** 2 / 2) / (
            math.sqrt(2 * math.pi) * step)
        density = kernel @ mass
        u = s
        w = np.full(GRID_POINTS, u[1] - u[0])
        w[[0, -1]] /= 2
    return out


def _rounded(x: np.ndarray) -> np.ndarray:
    """``x`` to 10 significant digits (module docstring, "Reproducible")."""
    return np.array([float(f"{v:.10g}") for v in np.ravel(x)]).reshape(np.shape(x))


@functools.lru_cache(maxsize=16)
def nominal_levels(looks: tuple[int, ...], spending: str = SPENDING) -> np.ndarray:
    """ν_k(α) for every level of :data:`ALPHAS` (rows) and look (columns) of a schedule whose
    looks are after ``looks`` repeats (module docstring)."""
    from scipy.special import ndtr

    fractions = np.asarray(looks, dtype=float) / looks[-1]
    return _rounded(np.array([2 * ndtr(-boundaries(a, fractions, spending)) for a in ALPHAS]))


@functools.lru_cache(maxsize=16)
def t_allowance(looks: tuple[int, ...], spending: str = SPENDING) -> float:
    """The factor c ≥ 1 a schedule's levels are divided by so that paired t-tests at its
    looks keep them (module docstring, "Small samples"): the procedure of :func:`boundaries`
    run on :data:`ALLOWANCE_PATHS` null paths of normal per-repeat differences at each level
    of :data:`ALLOWANCE_LEVELS`, c = the largest rate / α plus two standard errors, rounded
    up to a hundredth. One look is a t-test at its level: c = 1."""
    from scipy.special import ndtr
    from scipy.stats import t as student

    from modelvar.seeding import stream

    if len(looks) == 1:
        return 1.0
    rng = stream(0, "sequential-t-allowance",
                 scheme=",".join(map(str, looks)) + f" {spending}").generator()
    fractions = np.asarray(looks, dtype=float) / looks[-1]
    nominal = {a: 2 * ndtr(-boundaries(a, fractions, spending)) for a in ALLOWANCE_LEVELS}
    crossed = dict.fromkeys(ALLOWANCE_LEVELS, 0)
    done = 0
    while done < ALLOWANCE_PATHS:
        m = min(ALLOWANCE_CHUNK, ALLOWANCE_PATHS - done)
        x = rng.standard_normal((m, looks[-1]))
        total, squares = np.cumsum(x, axis=1), np.cumsum(x * x, axis=1)
        p = []
        for n in looks:
            mean = total[:, n - 1] / n
            sd = np.sqrt(np.maximum(squares[:, n - 1] - n * mean * mean, 0.0) / (n - 1))
            p.append(2 * student.sf(np.abs(mean) / (sd / math.sqrt(n)), n - 1))
        p = np.column_stack(p)
        for a in ALLOWANCE_LEVELS:
            crossed[a] += int((p <= nominal[a][None, :]).any(axis=1).sum())
        done += m
    worst = 1.0
    for a in ALLOWANCE_LEVELS:
        rate = crossed[a] / ALLOWANCE_PATHS
        error = math.sqrt(max(rate * (1 - rate), a * (1 - a)) / ALLOWANCE_PATHS)
        worst = max(worst, (rate + 2 * error) / a)
    return math.ceil(round(worst * 100, 6)) / 100


def levels_of(p, n: int, looks: tuple[int, ...], spending: str = SPENDING) -> np.ndarray:
    """The level at which the look after ``n`` repeats rejects each p-value of ``p``: c · α,
    α where that look's nominal level reaches p (module docstring), at most 1 (an array)."""
    looks = tuple(looks)
    if n not in looks:
        raise ValueError(f"{n} repeats is not a planned look ({', '.join(map(str, looks))})")
    nominal = nominal_levels(looks, spending)[:, looks.index(n)]
    p = np.asarray(p, dtype=float)
    logs = np.log(np.maximum(nominal, 1e-300))
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.log(np.where(p > 0, p, 1e-300))
        inside = np.exp(np.interp(x, logs, np.log(ALPHAS)))
        below = ALPHAS[0] * p / nominal[0] if nominal[0] > 0 else np.zeros_like(p)
    alpha = np.where(p >= nominal[-1], 1.0, np.where(x < logs[0], below, inside))
    alpha = np.where(p <= 0, 0.0, alpha)
    return np.where(np.isfinite(p), np.minimum(1.0, t_allowance(looks, spending) * alpha),
                    np.nan)


def sequential_p(p_values: dict[int, float], looks: tuple[int, ...],
                 spending: str = SPENDING) -> tuple[float, int | None]:
    """A hypothesis's sequential p-value (module docstring) from its p-values at the looks it
    had (look's repeats → p), and the look at which it is smallest (the first of equal ones;
    (inf, None) without a look)."""
    best: tuple[float, int | None] = (math.inf, None)
    for n in sorted(p_values):
        if not np.isfinite(p_values[n]):
            continue
        level = float(levels_of(np.array([p_values[n]]), n, looks, spending)[0])
        if level < best[0]:
            best = (level, n)
    return best


def first_look(p_values: dict[int, float], looks: tuple[int, ...], level: float,
               spending: str = SPENDING) -> int:
    """The first look at which a hypothesis that holds at ``level`` crossed: its sequential
    p-value on that look alone is at most ``level``; its verdict there is a rejection of the
    sequential test at that level."""
    return next(n for n in sorted(p_values)
                if np.isfinite(p_values[n])
                and sequential_p({n: p_values[n]}, looks, spending)[0] <= level * (1 + 1e-9))


def final_boundary(level, looks: tuple[int, ...], sides: int = 2, spending: str = SPENDING):
    """The z a statistic must reach at the last look to be rejected at ``level`` (a number
    or an array): the last look's nominal level at ``level`` / c, two-sided or, ``sides`` =
    1, each of two one-sided tests'; inf at a level of 0."""
    from scipy.special import ndtri

    looks = tuple(looks)
    level = np.asarray(level, dtype=float)
    column = np.log(np.maximum(nominal_levels(looks, spending)[:, -1], 1e-300))
    with np.errstate(divide="ignore", invalid="ignore"):
        target = np.log(np.clip(level / t_allowance(looks, spending), 1e-300, ALPHAS[-1]))
        nu = np.exp(np.interp(target, np.log(ALPHAS), column))
        z = -ndtri(nu / 2 if sides == 2 else nu)
    z = np.where(level > 0, z, np.inf)
    return float(z) if z.ndim == 0 else z
