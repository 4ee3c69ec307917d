"""Verdicts of a sequential study: error control that holds whatever look the study stops at.

A sequential study (:mod:`modelvar.study.rounds`) analyses each dataset × classifier (block) at
its planned looks, n_1 < n_2 < … ≤ n_max repeats, and stops a block once its claims are
decided. Looking again and again at a claim's p-value and stopping when it is small would make
a false claim far likelier than the test's level. Here every look has its share of the level
(α-spending: the look at n spends s_k = n_k / n_max − n_{k−1} / n_max of it; Lan & DeMets 1983
with a linear spending function, as AdaStop's; the union bound over the looks, Bonferroni
across them, keeps it valid under any dependence between looks and any stopping rule), and a
claim's **sequential p-value** is

    p* = min_k p_k / s_k      over the looks k at which it was computed,

with p_k its p-value on the first n_k repeats (the claim's own: a comparison's smaller of told
apart and practically equivalent, a leading source's intersection-union p; modules
:mod:`~modelvar.findings.paired`, :mod:`~modelvar.findings.comparison`). Under a claim's null,
P(p* ≤ α) ≤ Σ_k P(p_k ≤ α s_k) ≤ α Σ_k s_k ≤ α, whatever the looks taken. The page then
controls the false-discovery rate over the p* of every claim it states with
Benjamini–Yekutieli (valid under any dependence, :mod:`~modelvar.findings.multiplicity`); a
claim holds where p* is at most the threshold T, and its verdict (told apart, equivalent) is
the one of its decisive look, the first k with p_k ≤ T · s_k (when the study could tell).

**Stopping.** After each round a block stays open while one of its claims (those the config's
``sequential.decide`` names: every claim, or the leading sources and largest shares) is
neither holding nor out of reach: a claim whose either verdict would need more repeats than
``sequential.max_repeats`` for 80 % power at the level it can still reach (the page's
boundary for its next claim to hold times the share of the level the later looks have left),
if its difference and spread stay as seen (a claim without a power calculation: projected from
its p-value, a statistic growing with √n), is *undecidable within the budget*
(:data:`modelvar.study.rounds.FUTILE`). An open block gets ``sequential.step`` more repeats; a
block at the last look stops.

Statements over datasets (from 6 datasets) are made once, on each dataset's repeats at its
stop: the signs of a null's per-dataset differences stay symmetric under a stopping rule that
looks only at |t| and at equivalence, so the Wilcoxon test over datasets keeps its level.
They keep no block open.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from modelvar.findings.claims import status_at
from modelvar.findings.comparison import leader_verdict, study_comparison
from modelvar.findings.multiplicity import adjusted, next_boundary
from modelvar.findings.multiplicity import threshold as control_threshold
from modelvar.findings.paired import verdict_of, verdicts_at
from modelvar.study.rounds import AT_MAX, DECIDED, FUTILE, Rounds, Schedule

#: the columns of the ``blocks`` table (a sequential study's; empty for fixed repeats)
BLOCK_COLUMNS = ["dataset", "classifier", "repeats", "looks", "last_look", "claims",
                 "open_claims", "status"]
#: claims made once, on every block's repeats at its stop (module docstring): not per look
ONCE_KINDS = ("classifiers over datasets",)
#: the claims a block must decide under ``sequential.decide: leaders``
LEADING_KINDS = ("leader", "largest share")
METHOD = ("Every claim's p-value is sequential: the level is spent linearly over the {looks} "
          "planned looks from {start} to {max} repeats, so the control holds whatever look a "
          "dataset × classifier stopped at.")


def _block_of(frame: pd.DataFrame) -> pd.Series:
    return frame["dataset"].astype(str) + "|" + frame["classifier"].astype(str)


def at_look(tables: dict[str, pd.DataFrame], rounds: Rounds, n: int) -> dict[str, pd.DataFrame]:
    """The rows of the blocks that had the look at ``n`` repeats, of their first ``n`` repeats
    (every table with ``dataset``, ``classifier`` and ``repeat`` columns)."""
    blocks = {name for name, b in rounds.blocks.items() if n in b.looks}
    return {name: t[_block_of(t).isin(blocks).to_numpy() & (t["repeat"] < n).to_numpy()]
            for name, t in tables.items()}


def _verdict(kind: str, row: pd.Series, threshold: float) -> str | bool:
    """A claim's verdict at ``threshold`` from its row at one look."""
    if kind == "leader":
        return leader_verdict(row["p_lead"], row["p_equivalent"], bool(row["ahead"]), threshold)
    if kind in ("classifiers", "combined"):
        return verdict_of(row["p_difference"], row["p_equivalent"], row["difference"],
                          bool(row["identical"]), threshold)
    if kind == "seed claim":
        return status_at(row, threshold)
    if kind == "largest share":
        return bool(row["lead_p"] <= threshold)
    raise ValueError(f"no sequential verdict for a claim of kind {kind!r}")


def sequential_p(p_values: dict[int, float], schedule: Schedule) -> tuple[float, int | None]:
    """A claim's sequential p-value p* = min_k p_k / s_k over the looks it was computed at
    (``p_values``: look's repeats → p_k; module docstring), at most 1, and the look of the
    minimum (the first of equal ones; (inf, None) without a look)."""
    best: tuple[float, int | None] = (np.inf, None)
    for n in sorted(p_values):
        value = min(1.0, p_values[n] / schedule.share(n))
        if value < best[0]:
            best = (value, n)
    return best


def first_look(p_values: dict[int, float], schedule: Schedule, threshold: float) -> int:
    """The first look at which a claim that holds at ``threshold`` holds: p_k ≤ T · s_k. Its
    verdict there is a rejection at that look's share of the level, as valid as at any other
    look (the union bound covers every look), and it says when the study could tell."""
    return next(n for n in sorted(p_values)
                if p_values[n] / schedule.share(n) <= threshold)


def sequential_verdicts(looks: dict[int, dict[str, pd.DataFrame]],
                        final: dict[str, pd.DataFrame], schedule: Schedule) -> tuple[float, int]:
    """Every counted claim of the ``final`` tables (each block on all its repeats) judged on
    its sequential p-value over the ``looks`` (look → that look's judged tables, module
    docstring): the ``verdicts`` table gets ``p_look`` (its p-value on all its repeats),
    ``p_value`` (p*), ``look`` (the repeats of the decisive look: the first at which a claim
    that holds holds, :func:`first_look`; else the look of p*), ``p_adjusted`` and ``holds``;
    each claim's row its verdict, ``p_value`` and ``p_adjusted``. Returns (the threshold,
    the claims held)."""
    counted = final["verdicts"].copy()
    seen: dict[str, dict[int, float]] = {key: {} for key in counted["key"]}
    for n, judged in looks.items():
        for key, p in zip(judged["verdicts"]["key"], judged["verdicts"]["p_value"],
                          strict=True):
            if key in seen and np.isfinite(p):
                seen[key][n] = float(p)
    best = {key: sequential_p(ps, schedule) for key, ps in seen.items()}
    last = max(looks)
    for _, claim in counted[counted["kind"].isin(ONCE_KINDS)].iterrows():
        best[claim["key"]] = (float(claim["p_value"]), last)
    counted["p_look"] = counted["p_value"]
    counted["p_value"] = [best[k][0] if best[k][1] is not None else np.nan
                          for k in counted["key"]]
    counted["look"] = [best[k][1] for k in counted["key"]]
    counted = counted[np.isfinite(counted["p_value"].astype(float))].reset_index(drop=True)
    threshold = control_threshold(counted["p_value"])
    counted["p_adjusted"] = adjusted(counted["p_value"].to_numpy(float))
    counted["holds"] = counted["p_value"] <= threshold
    counted["look"] = [
        first_look(seen[k], schedule, threshold) if held and kind not in ONCE_KINDS else n
        for k, kind, held, n in zip(counted["key"], counted["kind"], counted["holds"],
                                    counted["look"], strict=True)]
    for name in ("comparison", "margins", "combined", "claims"):
        final[name]["p_adjusted"] = np.nan
    if not final["components"].empty:
        final["components"]["p_adjusted"] = np.nan
        final["components"]["lead_held"] = False
    final["comparison"]["verdict"] = verdicts_at(final["comparison"],
                                                 threshold * schedule.share(last))
    final["study_comparison"] = study_comparison(final["comparison"], threshold)
    final["study_comparison"]["p_adjusted"] = np.nan
    for _, claim in counted.iterrows():
        if claim["kind"] in ONCE_KINDS:
            final[claim["table"]].loc[claim["row"], "p_adjusted"] = claim["p_adjusted"]
            continue
        n = claim["look"]
        decisive = looks[n]
        where = decisive["verdicts"].set_index("key").loc[claim["key"]]
        row = decisive[where["table"]].loc[where["row"]]
        verdict = _verdict(claim["kind"], row, threshold * schedule.share(n))
        table = final[claim["table"]]
        i = claim["row"]
        table.loc[i, "p_value" if claim["kind"] != "largest share" else "lead_p"] = \
            claim["p_value"]
        table.loc[i, "p_adjusted"] = claim["p_adjusted"]
        if claim["kind"] == "largest share":
            table.loc[i, "lead_held"] = bool(claim["holds"]) and bool(verdict)
        elif claim["kind"] == "seed claim":
            table.loc[i, "status"] = verdict if claim["holds"] else "inconclusive"
        else:
            table.loc[i, "verdict"] = verdict if claim["holds"] else _verdict(
                claim["kind"], table.loc[i], -np.inf)
    final["verdicts"] = counted
    return threshold, int(counted["holds"].sum())


def reach_factor(level: float, schedule: Schedule, n: int) -> float:
    """The repeats a claim needs to be decided at the level it can still reach — ``level``
    (the page's next boundary, :func:`modelvar.findings.multiplicity.next_boundary`) times the
    share of the error rate the looks after ``n`` have left — over those it needs at 5 % (its
    ``repeats_needed``): ((z(1 − a/2) + z(0.8)) / (z(0.975) + z(0.8)))² (the normal
    approximation of a test's sample size, n ∝ (z_α + z_β)²); inf after the last look."""
    from scipy.stats import norm

    left = (1.0 - schedule.spent(n)) * level
    if not left > 0:
        return np.inf
    return float(((norm.isf(left / 2) + norm.ppf(0.8)) / (norm.isf(0.025) + norm.ppf(0.8)))
                 ** 2)


def projected_repeats(p_value: float, repeats: int) -> float:
    """The repeats a claim with no power calculation of its own needs for 80 % power at 5 %,
    projected from its p-value on ``repeats`` repeats: a test statistic grows with √n, so
    n · ((z(0.975) + z(0.8)) / z(1 − p/2))² (inf where p is 1 or not a number)."""
    from scipy.stats import norm

    if not np.isfinite(p_value) or p_value >= 1:
        return np.inf
    z = norm.isf(max(p_value, 1e-300) / 2)
    return float(repeats * ((norm.isf(0.025) + norm.ppf(0.8)) / z) ** 2)


def block_status(verdicts: pd.DataFrame, rounds: Rounds, schedule: Schedule,
                 decide: str) -> pd.DataFrame:
    """Per block: its repeats, looks, the claims it must decide that are still open, and its
    status after this round (module docstring, "Stopping"): ``open`` (it gets
    ``schedule.step`` more repeats), or why it stopped. A claim is out of reach where its
    ``repeats_needed`` (at 5 %) times :func:`reach_factor` at the page's next boundary (the
    level of the ``verdicts``' next claim to hold) is beyond the last look (a claim without
    one: :func:`projected_repeats`). Claims made once over datasets (:data:`ONCE_KINDS`) keep
    no block open."""
    needed = verdicts[~verdicts["kind"].isin(ONCE_KINDS)] if decide == "all" else \
        verdicts[verdicts["kind"].isin(LEADING_KINDS)]
    level = next_boundary(verdicts["p_value"])
    rows = []
    for name, block in rounds.blocks.items():
        dataset, classifier = name.split("|", 1)
        mine = needed[[name in blocks for blocks in needed["blocks"]]]
        open_ = mine[~mine["holds"].astype(bool)]
        factor = reach_factor(level, schedule, block.repeats)
        need = [projected_repeats(float(p), block.repeats) if not np.isfinite(float(n)) else
                float(n) for n, p in zip(open_["repeats_needed"], open_["p_look"], strict=True)]
        reachable = open_[~(np.asarray(need, float) * factor > schedule.max)]
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
