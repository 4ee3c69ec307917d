"""Verdicts of a sequential study: error control that holds whatever look the study stops at.

A sequential study (:mod:`modelvar.study.rounds`) analyses each dataset × classifier (block) at
its planned looks, n_1 < n_2 < … ≤ n_max repeats, and stops a block once its claims are
decided. Looking again and again at a claim's p-value and stopping when it is small would make
a false claim far likelier than the test's level. Here every look has its share of the level
(α-spending: the look at n spends s_k = n_k / n_max − n_{k−1} / n_max of it; Lan & DeMets 1983
with a linear spending function, as AdaStop's; the union bound over the looks, Bonferroni
across them, keeps it valid under any dependence between looks and any stopping rule), and
each of a claim's hypotheses (:mod:`modelvar.findings.kinds`) gets a **sequential p-value**

    p* = min_k p_k / s_k      over the looks k at which it was computed,

with p_k its p-value on the first n_k repeats. Under its null, P(p* ≤ α) ≤ Σ_k P(p_k ≤ α s_k)
≤ α Σ_k s_k ≤ α, whatever the looks taken. The page's two tiers then decide the p* as they
decide a fixed study's p-values (:mod:`~modelvar.findings.multiplicity`: Holm for the
headline claims, Benjamini–Yekutieli for the exploratory ones, both valid under any
dependence), and a claim's verdict is the one of its decisive look: the first k at which one
of its hypotheses that holds passed, p_k ≤ L · s_k, L the level it faced.

**Stopping.** After each round a block stays open while one of its claims (those the config's
``sequential.decide`` names: every claim, or the kinds declared ``leading``) is neither
holding nor out of reach: a claim whose either verdict would need more repeats than
``sequential.max_repeats`` for 80 % power at the level it can still reach — the level it faces
on the page (its tier's next bound) times the share of the level the later looks have left
(:func:`level_left`), from its standardised effect (:func:`modelvar.findings.judging.needed_at`;
a claim without one: projected from its p-value, a statistic growing with √n,
:func:`projected_repeats`) — is *undecidable within the budget*
(:data:`modelvar.study.rounds.FUTILE`). An open block gets ``sequential.step`` more repeats; a
block at the last look stops.

Statements over datasets (kinds declared ``once``) are made once, on each dataset's repeats at
its stop: the signs of a null's per-dataset differences stay symmetric under a stopping rule
that looks only at |t| and at equivalence, so the test over datasets keeps its level. They
keep no block open.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from modelvar.findings import kinds as registry
from modelvar.findings.judging import decide_claims, needed_at, write_verdicts
from modelvar.study.rounds import AT_MAX, DECIDED, FUTILE, Rounds, Schedule

#: the columns of the ``blocks`` table (a sequential study's; empty for fixed repeats)
BLOCK_COLUMNS = ["dataset", "classifier", "repeats", "looks", "last_look", "claims",
                 "open_claims", "status"]
METHOD = ("Every claim's p-value is sequential: the level is spent linearly over the {looks} "
          "planned looks from {start} to {max} repeats, so each tier's control holds "
          "whatever look a dataset × classifier stopped at.")


def _block_of(frame: pd.DataFrame) -> pd.Series:
    return frame["dataset"].astype(str) + "|" + frame["classifier"].astype(str)


def at_look(tables: dict[str, pd.DataFrame], rounds: Rounds, n: int) -> dict[str, pd.DataFrame]:
    """The rows of the blocks that had the look at ``n`` repeats, of their first ``n`` repeats
    (every table with ``dataset``, ``classifier`` and ``repeat`` columns)."""
    blocks = {name for name, b in rounds.blocks.items() if n in b.looks}
    return {name: t[_block_of(t).isin(blocks).to_numpy() & (t["repeat"] < n).to_numpy()]
            for name, t in tables.items()}


def sequential_p(p_values: dict[int, float], schedule: Schedule) -> tuple[float, int | None]:
    """A hypothesis's sequential p-value p* = min_k p_k / s_k over the looks it was computed
    at (``p_values``: look's repeats → p_k; module docstring), at most 1, and the look of the
    minimum (the first of equal ones; (inf, None) without a look)."""
    best: tuple[float, int | None] = (np.inf, None)
    for n in sorted(p_values):
        value = min(1.0, p_values[n] / schedule.share(n))
        if value < best[0]:
            best = (value, n)
    return best


def first_look(p_values: dict[int, float], schedule: Schedule, threshold: float) -> int:
    """The first look at which a hypothesis that holds at ``threshold`` holds: p_k ≤ T · s_k.
    Its verdict there is a rejection at that look's share of the level, as valid as at any
    other look (the union bound covers every look), and it says when the study could tell."""
    return next(n for n in sorted(p_values)
                if p_values[n] / schedule.share(n) <= threshold)


def sequential_verdicts(looks: dict[int, dict[str, pd.DataFrame]],
                        final: dict[str, pd.DataFrame], schedule: Schedule,
                        context: registry.Context) -> pd.DataFrame:
    """Every claim of the ``final`` tables (each block on all its repeats, ``context`` their
    inputs) judged on its hypotheses' sequential p-values over the ``looks`` (look → that
    look's judged tables; module docstring); a kind made ``once`` on its p-values at the end.
    The claims' tables get the sequential p-values in their hypotheses' columns and the
    verdicts of the decisive looks; returns the verdicts table with ``p_look`` (the claim's
    p-value on all its repeats) and ``look`` (the decisive look's repeats: the first at which
    a claim that holds holds, :func:`first_look`; else the look of its smallest p*)."""
    claims = final["verdicts"][[c for c in final["verdicts"].columns
                                if c not in ("adjusted", "p_bounds", "held", "p_adjusted",
                                             "holds", "p_bound", "verdict", "needed")]].copy()
    seen: dict[str, dict[str, dict[int, float]]] = {
        key: {h: {} for h in hyps} for key, hyps in zip(claims["key"], claims["hypotheses"],
                                                        strict=True)}
    for n, judged in looks.items():
        v = judged["verdicts"]
        for key, hyps, ps in zip(v["key"], v["hypotheses"], v["p_values"], strict=True):
            if key in seen:
                for h, p in zip(hyps, ps, strict=True):
                    if np.isfinite(p):
                        seen[key][h][n] = float(p)
    last = max(looks)
    stars, at = [], []
    for key, kind_name, ps in zip(claims["key"], claims["kind"], claims["p_values"],
                                  strict=True):
        kind = registry.kind(kind_name)
        if kind.once:
            stars.append([float(p) for p in ps])
            at.append(last)
            continue
        best = [sequential_p(seen[key][h], schedule) for h in kind.hypotheses]
        stars.append([v if n is not None else np.nan for v, n in best])
        finite = [(v, n) for v, n in best if n is not None]
        at.append(min(finite)[1] if finite else None)
    claims["p_look"] = claims["p_value"]
    claims["p_values"] = stars
    claims["p_value"] = [float(np.nanmin(p)) if np.isfinite(p).any() else np.nan
                         for p in stars]
    claims["look"] = at
    claims = claims[np.isfinite(claims["p_value"].astype(float))].reset_index(drop=True)
    decided = decide_claims(claims)
    rows = {}
    for c, claim in decided.iterrows():
        kind = registry.kind(claim["kind"])
        table = final[claim["table"]]
        for h, p in zip(claim["hypotheses"], claim["p_values"], strict=True):
            table.loc[claim["row"], h] = p
        if not claim["holds"] or kind.once:
            continue
        n = min(first_look(seen[claim["key"]][h], schedule,
                           claim["p_bounds"][claim["hypotheses"].index(h)])
                for h in claim["held"])
        decided.loc[c, "look"] = n
        decisive = looks[n]
        where = decisive["verdicts"].set_index("key").loc[claim["key"]]
        rows[c] = decisive[where["table"]].loc[where["row"]]
    return write_verdicts(final, decided, context, rows)


def level_left(level: float, schedule: Schedule, n: int) -> float:
    """The level a claim can still reach after the look at ``n`` repeats: the level it faces
    on the page times the share of the error rate the later looks have left (0 after the
    last look)."""
    return max(0.0, 1.0 - schedule.spent(n)) * level


def projected_repeats(p_value: float, repeats: int, alpha: float = 0.05) -> float:
    """The repeats a claim with no power calculation of its own needs for 80 % power at
    ``alpha``, projected from its p-value on ``repeats`` repeats: a test statistic grows with
    √n, so n · ((z(1 − α/2) + z(0.8)) / z(1 − p/2))² (inf where p is 1 or not a number, or
    ``alpha`` is 0)."""
    from scipy.stats import norm

    if not np.isfinite(p_value) or p_value >= 1 or not alpha > 0:
        return np.inf
    z = norm.isf(max(p_value, 1e-300) / 2)
    return float(repeats * ((norm.isf(alpha / 2) + norm.ppf(0.8)) / z) ** 2)


def block_status(verdicts: pd.DataFrame, rounds: Rounds, schedule: Schedule,
                 decide: str) -> pd.DataFrame:
    """Per block: its repeats, looks, the claims it must decide that are still open, and its
    status after this round (module docstring, "Stopping"): ``open`` (it gets
    ``schedule.step`` more repeats), or why it stopped. A claim is out of reach where the
    repeats it needs for 80 % power at the level left to it (:func:`level_left` of the bound
    its p faces, ``p_bound``; from its ``effect`` and ``room``, else
    :func:`projected_repeats` from its p-value on all the block's repeats, ``p_look``) are
    beyond the last look. Claims made once (kinds declared ``once``) keep no block open."""
    once = verdicts["kind"].map(lambda k: registry.kind(k).once).astype(bool)
    leading = verdicts["kind"].map(lambda k: registry.kind(k).leading).astype(bool)
    needed = verdicts[~once] if decide == "all" else verdicts[leading & ~once]
    rows = []
    for name, block in rounds.blocks.items():
        dataset, classifier = name.split("|", 1)
        mine = needed[[name in list(blocks) for blocks in needed["blocks"]]]
        open_ = mine[~mine["holds"].astype(bool)]
        need = []
        for _, claim in open_.iterrows():
            left = level_left(float(claim["p_bound"]), schedule, block.repeats)
            n = needed_at(claim["effect"], claim["room"], left, claim["unit"]) if left > 0 \
                else np.inf
            need.append(n if np.isfinite(n) else
                        projected_repeats(float(claim["p_look"]), block.repeats, left))
        reachable = open_[~(np.asarray(need, float) > schedule.max)]
        if block.stopped:
            status = block.stopped
        elif open_.empty:
            status = DECIDED
        elif block.repeats >= schedule.max:
            status = AT_MAX
        elif reachable.empty:
            status = FUTILE
        else:
            status = "open"
        rows.append({"dataset": dataset, "classifier": classifier, "repeats": block.repeats,
                     "looks": ", ".join(map(str, block.looks)), "last_look": schedule.max,
                     "claims": len(mine), "open_claims": len(open_), "status": status})
    return pd.DataFrame(rows, columns=BLOCK_COLUMNS)


def method_line(schedule: Schedule) -> str:
    looks = schedule.looks()
    return METHOD.format(looks=len(looks), start=looks[0], max=looks[-1])
