"""When a block of a sequential study stops, and what its rounds cost: the one place the findings
(a round's statuses) and the planner (the next round, its prices) both call.

**A claim keeps its block open** while it neither holds nor is futile. It is **futile** when
its *conditional power* — the chance that one of its verdicts is reached at the last look,
given the repeats seen so far and a declared effect of interest for the repeats to come
(Lan, Simon & Halperin 1982; Jennison & Turnbull 2000, §10.2) — is below
``Futility.below`` (:class:`~modelvar.study.rounds.Futility`, config
``sequential.futility_below``). With n of N repeats seen, a claim's standardised effect e
(|mean difference| / SD) and the last look's boundary b at the level the claim faces on the
page (:func:`~modelvar.study.looks.final_boundary`), the sum of the N standardised differences
is n·e + θ·(N − n) + S, S ~ N(0, N − n):

* **told apart**, under a true effect θ in the direction seen:
  CP = Φ((n·e + θ(N − n) − b√N) / √(N − n)) + Φ((−b√N − n·e − θ(N − n)) / √(N − n));
* **practically equivalent** (a claim with a margin of m SDs, its mean x = m − room SDs
  from 0), under a true tie (θ = 0) and the one-sided boundary b₁:
  CP = Φ((A − n·x) / √(N − n)) − Φ((−A − n·x) / √(N − n)), A = N·m − b₁√N.

A claim's conditional power is the larger of the two (of those it can reach). **The effect of
interest** θ (config ``sequential.effect_of_interest``) is, by default, the claim's own
equivalence margin — the smallest difference the page calls a difference — or, where larger or
the claim has no margin, the effect the schedule finds with 80 % power at the claim's level,
(b + z₀.₈) / √N: a margin narrower than what the schedule can find would give up on claims it
still finds (the margin alone lost more than 5 % of the power at narrow margins,
docs/measurements/sequential.md); or a standardised effect the user states. A claim whose
effect is unknown takes the one its p-value implies, z(1 − p/2) / √n. The rule is
**non-binding**: a claim's p-value and verdict never depend on it (its sequential p-value
counts the looks it had), so the error control holds whether or not a block stops for
futility, and the rule may change between rounds. The last look's boundary stands for all the
later looks (an O'Brien–Fleming boundary spends little before the last): the power is a little
under the exact one, and the rule stops slightly sooner than an exact one would.

**A block's status** after a round (:func:`block_status`): ``decided`` (every claim it must
decide holds), ``maximum repeats reached`` (its last look), ``stopped for futility`` (every
open claim futile), else ``open`` (``sequential.step`` more repeats); a stop recorded in an
earlier round stands (:class:`~modelvar.study.rounds.Block`). **The next round**
(:func:`advance`) records this round's stops, stops every open block where the round's fits
would take the study past ``sequential.budget_cpu_hours`` (``CPU budget spent``), and gives the
others their next look.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from modelvar.study.looks import final_boundary
from modelvar.study.rounds import Futility, Rounds, Schedule

#: why a block stopped (the blocks table's ``status``; ``open``: it gets more repeats)
DECIDED, FUTILE, AT_MAX, OVER_BUDGET = ("decided", "stopped for futility",
                                        "maximum repeats reached", "CPU budget spent")
OPEN = "open"
#: the power the effect the schedule finds is defined by (claims without a margin)
DESIGN_POWER = 0.8
#: the columns of the ``blocks`` table (a sequential study's; empty for fixed repeats)
BLOCK_COLUMNS = ["dataset", "classifier", "repeats", "looks", "last_look", "claims",
                 "open_claims", "futile_claims", "best_power", "status"]
#: what :func:`block_status` reads of each claim
CLAIM_COLUMNS = ("blocks", "holds", "effect", "room", "margin_sds", "p_bound", "p_look")


def _phi(x):
    from scipy.special import ndtr

    return ndtr(x)


def design_effect(level, schedule: Schedule):
    """The standardised effect the schedule's last look tells apart with 80 % power at
    ``level`` (a number or an array): (b + z₀.₈) / √N (module docstring)."""
    from scipy.special import ndtri

    b = final_boundary(level, schedule.looks(), spending=schedule.spending)
    return (b + float(ndtri(DESIGN_POWER))) / math.sqrt(schedule.max)


def effect_of_interest(margin, level, schedule: Schedule, futility: Futility):
    """θ of each claim (module docstring): the stated effect, else the larger of its margin
    and the design effect at its level (arrays or numbers)."""
    margin = np.asarray(margin, dtype=float)
    if futility.effect != "margin":
        return np.full(np.broadcast(margin, np.asarray(level)).shape, float(futility.effect))
    design = design_effect(level, schedule)
    return np.where(np.isfinite(margin) & (margin > 0), np.maximum(margin, design), design)


def conditional_powers(*, effect, room, margin, p_look, n, level, schedule: Schedule,
                       futility: Futility) -> np.ndarray:
    """Claims' conditional power after ``n`` repeats (module docstring; arrays, ``n`` one
    count or one per claim): the larger of the chances of telling each apart and of calling
    it equivalent by the last look; 0 at or after the last look or at a level of 0."""
    from scipy.special import ndtri

    effect, room, margin, p_look, level = (np.asarray(x, dtype=float) for x in
                                           (effect, room, margin, p_look, level))
    n = np.broadcast_to(np.asarray(n, dtype=float), np.broadcast(effect, level).shape)
    big_n = float(schedule.max)
    looks = schedule.looks()
    left = np.maximum(big_n - n, 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        implied = -ndtri(np.clip(p_look, 1e-300, 1.0) / 2) / np.sqrt(n)
        effect = np.abs(np.where(np.isfinite(effect), effect,
                                 np.where(np.isfinite(p_look), implied, 0.0)))
        theta = effect_of_interest(margin, level, schedule, futility)
        b = final_boundary(level, looks, spending=schedule.spending)
        shift = n * effect + theta * left
        told = _phi((shift - b * math.sqrt(big_n)) / np.sqrt(left)) \
            + _phi((-b * math.sqrt(big_n) - shift) / np.sqrt(left))
        has_margin = np.isfinite(margin) & (margin > 0)
        x = np.where(np.isfinite(room), margin - room, margin)  # beyond it: at best on it
        reach = big_n * margin - final_boundary(level, looks, sides=1,
                                                spending=schedule.spending) * math.sqrt(big_n)
        same = np.where(has_margin & (reach > 0),
                        _phi((reach - n * x) / np.sqrt(left))
                        - _phi((-reach - n * x) / np.sqrt(left)), 0.0)
    power = np.maximum(np.nan_to_num(told), np.nan_to_num(same))
    return np.where((n >= big_n) | ~(level > 0), 0.0, power)


def conditional_power(*, effect: float, room: float, margin: float, p_look: float, n: int,
                      level: float, schedule: Schedule, futility: Futility) -> float:
    """One claim's :func:`conditional_powers`."""
    return float(conditional_powers(effect=effect, room=room, margin=margin, p_look=p_look,
                                    n=n, level=level, schedule=schedule, futility=futility))


def block_status(claims: pd.DataFrame, rounds: Rounds) -> pd.DataFrame:
    """Per block (module docstring): its repeats and looks, the claims it must decide
    (``claims``: one row per claim that keeps blocks open, with :data:`CLAIM_COLUMNS`; the
    findings choose them by ``rounds.decide``), how many are open and how many of those are
    futile, the largest conditional power of an open claim, and its status."""
    schedule, futility = rounds.schedule, rounds.futility
    rows = []
    for name, block in rounds.blocks.items():
        dataset, classifier = name.split("|", 1)
        mine = claims[[name in list(b) for b in claims["blocks"]]] if len(claims) else claims
        open_ = mine[~mine["holds"].astype(bool)] if len(mine) else mine
        power = list(conditional_powers(
            effect=open_["effect"].astype(float), room=open_["room"].astype(float),
            margin=open_["margin_sds"].astype(float), p_look=open_["p_look"].astype(float),
            n=block.repeats, level=open_["p_bound"].astype(float), schedule=schedule,
            futility=futility)) if len(open_) else []
        futile = int(sum(p < futility.below for p in power))
        if block.stopped:
            status = block.stopped
        elif open_.empty:
            status = DECIDED
        elif block.repeats >= schedule.max:
            status = AT_MAX
        elif futile == len(open_):
            status = FUTILE
        else:
            status = OPEN
        rows.append({"dataset": dataset, "classifier": classifier, "repeats": block.repeats,
                     "looks": ", ".join(map(str, block.looks)), "last_look": schedule.max,
                     "claims": len(mine), "open_claims": len(open_), "futile_claims": futile,
                     "best_power": max(power) if power else np.nan, "status": status})
    return pd.DataFrame(rows, columns=BLOCK_COLUMNS)


@dataclass(frozen=True)
class Advance:
    """What :func:`advance` decided: whether the workflow runs again, and why, in lines."""

    another: bool
    lines: list[str]


def advance(rounds: Rounds, statuses: dict[str, str], *, cost_of_round=None,
            budget_seconds: float | None = None, spent_seconds: float = 0.0) -> Advance:
    """The next round (module docstring), changing ``rounds`` in place: each block's status
    this round (``statuses``: block → status) recorded where it stopped; where a budget is
    set, ``cost_of_round(open blocks)`` (CPU seconds) past it stops every open block, and the
    workflow runs once more to say so; else every open block gets its next look."""
    for name, block in rounds.blocks.items():
        if not block.stopped and statuses[name] != OPEN:
            block.stopped, block.stopped_round = statuses[name], rounds.round
    opens = [name for name, block in rounds.blocks.items() if not block.stopped]
    lines = [f"{name.replace('|', ', ')}: {block.repeats} repeats, "
             f"{block.stopped or OPEN}" for name, block in rounds.blocks.items()]
    if not opens:
        return Advance(False, [f"round {rounds.round}: every block has stopped", *lines])
    schedule = rounds.schedule
    if budget_seconds is not None and cost_of_round is not None:
        cost = float(cost_of_round(opens))
        if spent_seconds + cost > budget_seconds:
            rounds.round += 1  # a round of stops only: the findings say why
            for name in opens:
                rounds.blocks[name].stopped = OVER_BUDGET
                rounds.blocks[name].stopped_round = rounds.round - 1
            return Advance(True, [f"round {rounds.round - 1}: the next round's ≈ "
                                  f"{cost / 3600:.2f} CPU h would take the study's "
                                  f"{spent_seconds / 3600:.2f} h past the budget of "
                                  f"{budget_seconds / 3600:g} h: {len(opens)} open block(s) "
                                  "stop", *lines])
    for name in opens:
        block = rounds.blocks[name]
        block.repeats = schedule.next(block.repeats)
        block.looks.append(block.repeats)
    rounds.round += 1
    return Advance(True, [f"round {rounds.round}: {len(opens)} of {len(rounds.blocks)} "
                          f"block(s) get {schedule.step} more repeats", *lines])


def block_lines(blocks: pd.DataFrame) -> list[str]:
    """A sequential study's repeats per dataset × classifier and why each stopped (or that it
    gets more repeats), one line each, naming the limit that stopped it."""
    out = []
    for _, b in blocks.iterrows():
        n, still = int(b["claims"]), int(b["open_claims"])
        last = int(b["last_look"])
        futile = int(b["futile_claims"]) if "futile_claims" in b and pd.notna(
            b["futile_claims"]) else still
        best = float(b["best_power"]) if "best_power" in b and pd.notna(b["best_power"]) \
            else np.nan
        chance = f" (the best chance of a verdict by {last} repeats {best:.0%})" \
            if np.isfinite(best) else ""
        why = {
            DECIDED: f"all {n} of its claims hold",
            FUTILE: f"{n - still} of its {n} claims hold; the {still} still open could not be "
                    f"decided by {last} repeats even at the effect of interest{chance}",
            AT_MAX: f"{still} of its {n} claims still open at its last look ({last} repeats, "
                    "sequential.max_repeats)",
            OVER_BUDGET: f"{still} of its {n} claims still open when the next round would "
                         "have passed the CPU budget (sequential.budget_cpu_hours)",
        }.get(b["status"], f"{still} of its {n} claims still open, {still - futile} of them "
                           f"within reach{chance}")
        state = "open, more repeats in the next round" if b["status"] == OPEN else \
            f"stopped, {b['status']}"
        out.append(f"{b['dataset']}, {b['classifier']}: {b['repeats']} repeats (looks at "
                   f"{b['looks']}); {state}: {why}")
    return out
