"""Verdicts of a sequential study: error control that holds whatever look the study stops at.

A sequential study (:mod:`modelvar.study.rounds`) analyses each dataset × classifier (block) at
its planned looks, n_1 < n_2 < … ≤ n_max repeats, and stops a block once its claims are
decided. Looking again and again at a claim's p-value and stopping when it is small would make
a false claim far likelier than the test's level. Here each of a claim's hypotheses
(:mod:`modelvar.findings.kinds`) gets a **sequential p-value** from its p-values at the looks
it had (:func:`modelvar.study.looks.sequential_p`: exact group-sequential boundaries,
the schedule's spending function over its looks, computed from the joint distribution of the
looks' statistics): under its null P(p* ≤ α) ≤ α whatever look the study
stops at. The page's two tiers then decide the p* as they decide a fixed study's p-values
(:mod:`~modelvar.findings.multiplicity`: Holm for the headline claims, family-wise across
blocks and looks; Benjamini–Yekutieli for the exploratory ones), and a claim's verdict is the
one of its decisive look: the first at which one of its hypotheses that holds crossed its
boundary at the level it faced.

**Stopping** is :mod:`modelvar.study.stopping`'s: after each round a block stays open while
one of the claims it must decide (config ``sequential.decide``: every claim, or the kinds
declared ``leading``) neither holds nor is futile (its conditional power under the effect of
interest below the declared level). The findings hand it those claims with the standardised
effect, room and margin each was judged on (:func:`deciding_claims`).

Statements over datasets (kinds declared ``once``) are made once, on each dataset's repeats at
its stop: the signs of a null's per-dataset differences stay symmetric under a stopping rule
that looks only at |t| and at equivalence, so the test over datasets keeps its level. They
keep no block open.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from modelvar.findings import kinds as registry
from modelvar.findings.judging import decide_claims, write_verdicts
from modelvar.study.looks import first_look, sequential_p
from modelvar.study.rounds import Rounds, Schedule
from modelvar.study.stopping import block_status

METHOD = ("Every claim's p-value is sequential: the level is spent over the {looks} planned looks "
          "from {start} to {max} repeats by exact group-sequential boundaries ({spending}), so "
          "each tier's control holds whatever look a dataset × classifier stopped at.")


def _block_of(frame: pd.DataFrame) -> pd.Series:
    return frame["dataset"].astype(str) + "|" + frame["classifier"].astype(str)


def at_look(tables: dict[str, pd.DataFrame], rounds: Rounds, n: int) -> dict[str, pd.DataFrame]:
    """The rows of the blocks that had the look at ``n`` repeats, of their first ``n`` repeats
    (every table with ``dataset``, ``classifier`` and ``repeat`` columns)."""
    blocks = {name for name, b in rounds.blocks.items() if n in b.looks}
    return {name: t[_block_of(t).isin(blocks).to_numpy() & (t["repeat"] < n).to_numpy()]
            for name, t in tables.items()}


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
        best = [sequential_p(seen[key][h], schedule.looks(), schedule.spending)
                for h in kind.hypotheses]
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
        n = min(first_look(seen[claim["key"]][h], schedule.looks(),
                           claim["p_bounds"][claim["hypotheses"].index(h)], schedule.spending)
                for h in claim["held"])
        decided.loc[c, "look"] = n
        decisive = looks[n]
        where = decisive["verdicts"].set_index("key").loc[claim["key"]]
        rows[c] = decisive[where["table"]].loc[where["row"]]
    return write_verdicts(final, decided, context, rows)


def deciding_claims(verdicts: pd.DataFrame, decide: str) -> pd.DataFrame:
    """The claims that keep their blocks open (module docstring, "Stopping"): every claim not
    made once, or (``decide`` = ``leaders``) those of the kinds declared ``leading``; with
    the columns :func:`modelvar.study.stopping.block_status` reads."""
    once = verdicts["kind"].map(lambda k: registry.kind(k).once).astype(bool)
    leading = verdicts["kind"].map(lambda k: registry.kind(k).leading).astype(bool)
    chosen = verdicts[~once] if decide == "all" else verdicts[leading & ~once]
    return chosen[["kind", "blocks", "holds", "effect", "room", "margin_sds", "p_bound",
                   "p_look"]].reset_index(drop=True)


def sequential_status(verdicts: pd.DataFrame, rounds: Rounds) -> pd.DataFrame:
    """Each block's status after this round (:func:`modelvar.study.stopping.block_status` of
    the claims that decide it)."""
    return block_status(deciding_claims(verdicts, rounds.decide), rounds)


def method_line(schedule: Schedule) -> str:
    looks = schedule.looks()
    return METHOD.format(looks=len(looks), start=looks[0], max=looks[-1],
                         spending=schedule.spending)
