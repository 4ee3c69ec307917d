"""Sequential studies calibrated (issue 56): the page's own sequential verdicts on simulated
pages, and a claim-level model of them fast enough for thousands of pages.

:func:`run_sequential_pages` runs the pages of :mod:`modelvar.calibration.pages` round after
round, each block stopping where the page's own code stops it
(:func:`modelvar.findings.sequential.block_status`), and scores the last round's claims;
:func:`sequential_claims` is a claim-level model of it: per block ``claims_per_block`` paired
comparisons whose per-repeat differences are N(δ, 1) (δ by the block's type,
:data:`SEQUENTIAL_MIX`), each a t-test of a difference and two one-sided tests of equivalence
(margin 0.5 SD), judged in one Benjamini–Yekutieli family and stopped by the same rule;
:func:`fixed_claims` judges the same comparisons at a fixed number of repeats, the design it is
held against.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from modelvar.calibration.pages import SCENARIOS, score, simulate_page
from modelvar.findings.multiplicity import threshold as by_threshold

#: the comparison mix of the sequential calibration: per block type, the true difference of
#: its claims in units of their per-repeat SD (a tie: equivalence to find)
SEQUENTIAL_MIX = {"very strong": 5.0, "strong": 3.0, "moderate": 1.0, "weak": 0.6, "tie": 0.0}


#: blocks of each type like issue 56's 10-repeat study (two datasets, two classifiers): of
#: its stated comparisons 3 repeats decided 53 %, 5 decided 76 %, 10 decided 82 %, and 18 % stayed
#: open (a few moderate, the rest practical ties). The sequential plan's prior before a study has
#: findings (:func:`prior_repeats`), and the first mix of ``make bench-sequential``.
PRIOR_MIX = {"very strong": 11, "strong": 4, "moderate": 2, "tie": 3}


def prior_repeats(schedule, pages: int = 200, seed: int = 56) -> float:
    """The mean repeats per block a sequential study of ``schedule`` takes on
    :data:`PRIOR_MIX` (:func:`sequential_claims`): what its plan expects before its first
    round's findings."""
    blocks = [kind for kind, n in PRIOR_MIX.items() for _ in range(n)]
    return sequential_claims(blocks, schedule=schedule, pages=pages,
                             seed=seed)["mean repeats per block"]


def _look_p(d: np.ndarray, n: int, margin: float) -> tuple[np.ndarray, ...]:
    """Per claim (rows of ``d``, per-repeat differences in units of their SD), on the first
    ``n`` repeats: the paired t-test's p, the two one-sided tests' p of |mean| < margin, the
    mean and the SD."""
    from scipy import stats

    x = d[:, :n]
    mean, sd = x.mean(axis=1), x.std(axis=1, ddof=1)
    se = sd / np.sqrt(n)
    p_diff = 2 * stats.t.sf(np.abs(mean) / se, n - 1)
    p_eq = np.maximum(stats.t.sf((mean + margin) / se, n - 1),
                      stats.t.cdf((mean - margin) / se, n - 1))
    return p_diff, p_eq, mean, sd


def _false(holds, equivalent, mean, effect, margin) -> np.ndarray:
    """Claims that hold and say what is not so: a difference told apart where there is none
    or of the wrong sign, an equivalence where the difference is at or beyond the margin."""
    wrong_sign = np.sign(mean) != np.sign(effect)
    return holds & np.where(equivalent, np.abs(effect) >= margin,
                            (effect == 0) | wrong_sign)


def _reach_factor(level: float) -> float:
    """The repeats a claim needs at ``level`` over those it needs at 5 % (normal
    approximation of a test's sample size, n ∝ (z_α + z_β)²; inf at a level of 0)."""
    from scipy.stats import norm

    if not level > 0:
        return np.inf
    return float(((norm.isf(level / 2) + norm.ppf(0.8)) / (norm.isf(0.025) + norm.ppf(0.8)))
                 ** 2)


def sequential_claims(blocks: list[str], *, schedule, pages: int, seed: int,
                      claims_per_block: int = 3, margin: float = 0.5) -> dict[str, float]:
    """Simulated pages of a sequential study at the claim level (module docstring): per block
    ``claims_per_block`` paired comparisons of its type (a key of :data:`SEQUENTIAL_MIX`),
    analysed at the schedule's looks with sequential p-values
    (:mod:`modelvar.findings.sequential`) under Benjamini–Yekutieli, each block stopping once
    its claims hold or cannot be decided by the last look (80 % power at the seen difference,
    at the level left: :func:`~modelvar.findings.sequential.level_left`), the equivalence
    margin ``margin`` SDs.
    Returns the FDR, the share of pages with a false claim, the power per block type and the
    mean repeats per block."""
    from modelvar.findings.multiplicity import next_boundary
    from modelvar.findings.sequential import level_left

    rng = np.random.default_rng(seed)
    looks = schedule.looks()
    effect = np.repeat([SEQUENTIAL_MIX[b] for b in blocks], claims_per_block)
    block = np.repeat(np.arange(len(blocks)), claims_per_block)
    fdr, any_false, repeats = [], [], []
    power = {b: [] for b in set(blocks)}
    for _ in range(pages):
        d = effect[:, None] + rng.standard_normal((len(effect), schedule.max))
        best = np.full(len(effect), np.inf)
        equivalent = np.zeros(len(effect), bool)
        sign = np.zeros(len(effect))
        open_ = np.ones(len(blocks), bool)
        used = np.full(len(blocks), looks[0])
        for n in looks:
            active = open_[block]
            p_diff, p_eq, mean, sd = _look_p(d, n, margin)
            p = np.where(active, np.minimum(p_diff, p_eq) / schedule.share(n), np.inf)
            better = p < best
            equivalent = np.where(better, p_eq <= p_diff, equivalent)
            sign = np.where(better, np.sign(mean), sign)
            best = np.minimum(best, p)
            holds = best <= by_threshold(np.minimum(best, 1))
            z = 2.8  # 80 % power at 5 %, two-sided (normal approximation)
            with np.errstate(divide="ignore", invalid="ignore"):
                need = np.minimum((z * sd / np.abs(mean)) ** 2,
                                  np.where(margin > np.abs(mean),
                                           (2.5 * sd / (margin - np.abs(mean))) ** 2, np.inf))
            need = need * _reach_factor(level_left(next_boundary(np.minimum(best, 1)),
                                                   schedule, n))
            for b in np.flatnonzero(open_):
                mine = (block == b) & ~holds
                if not mine.any() or n == looks[-1] or (need[mine] > schedule.max).all():
                    open_[b] = False
                else:
                    used[b] = schedule.next(n)
            if not open_.any():
                break
        holds = best <= by_threshold(np.minimum(best, 1))
        false = _false(holds, equivalent, sign, effect, margin)
        fdr.append(false.sum() / max(holds.sum(), 1))
        any_false.append(false.any())
        repeats.append(used.mean())
        for b in set(blocks):
            mine = np.array([blocks[i] == b for i in block])
            power[b].append((holds & ~false)[mine].mean())
    return {"FDR": float(np.mean(fdr)), "pages with a false claim": float(np.mean(any_false)),
            "mean repeats per block": float(np.mean(repeats)),
            **{f"power {b}": float(np.mean(v)) for b, v in power.items()}}


def fixed_claims(blocks: list[str], *, repeats: int, pages: int, seed: int,
                 claims_per_block: int = 3, margin: float = 0.5) -> dict[str, float]:
    """The same pages with a fixed number of repeats for every block: their FDR, share of
    pages with a false claim and power (what :func:`sequential_claims` is held against)."""
    rng = np.random.default_rng(seed)
    effect = np.repeat([SEQUENTIAL_MIX[b] for b in blocks], claims_per_block)
    fdr, any_false = [], []
    power = {b: [] for b in set(blocks)}
    for _ in range(pages):
        d = effect[:, None] + rng.standard_normal((len(effect), repeats))
        p_diff, p_eq, mean, _ = _look_p(d, repeats, margin)
        p = np.minimum(p_diff, p_eq)
        holds = p <= by_threshold(p)
        false = _false(holds, p_eq <= p_diff, np.sign(mean), effect, margin)
        fdr.append(false.sum() / max(holds.sum(), 1))
        any_false.append(false.any())
        for b in set(blocks):
            mine = np.repeat([x == b for x in blocks], claims_per_block)
            power[b].append((holds & ~false)[mine].mean())
    return {"FDR": float(np.mean(fdr)), "pages with a false claim": float(np.mean(any_false)),
            **{f"power {b}": float(np.mean(v)) for b, v in power.items()}}


def run_sequential_pages(name: str, *, pages: int, schedule, seed: int, decide: str = "all",
                         datasets: int = 2, weak_below: float = 0.5) -> pd.DataFrame:
    """Simulated pages of a sequential study judged by the page's own code: each page's
    blocks run round after round (:func:`modelvar.findings.study.judge_sequential`, stopping
    by :func:`modelvar.findings.sequential.block_status`) until every block has stopped; the
    last round's claims scored against the truth (:func:`score`), one row per claim with its
    page and the page's mean repeats per block (``repeats``)."""
    from modelvar.findings.study import Sequential, judge_sequential
    from modelvar.study.rounds import Rounds

    rng = np.random.default_rng([seed, schedule.max, list(SCENARIOS).index(name), 56])
    out = []
    for page in range(pages):
        tables, truth = simulate_page(SCENARIOS[name], repeats=schedule.max,
                                      datasets=datasets, rng=rng)
        rounds = Rounds.first(schedule, tables["roles"])
        while True:
            part = {}
            for key, t in tables.items():
                if key == "roles":
                    continue
                limit = (t["dataset"].astype(str) + "|" + t["classifier"].astype(str)).map(
                    {b: block.repeats for b, block in rounds.blocks.items()})
                part[key] = t[t["repeat"] < limit]
            judged = judge_sequential(part["summary"], part["agreement"], part["runs"],
                                      tables["roles"], Sequential(schedule, rounds, decide),
                                      weak_below=weak_below)
            opens = judged.tables["blocks"]
            opens = opens[opens["status"] == "open"]
            if opens.empty:
                break
            rounds.round += 1
            for _, b in opens.iterrows():
                block = rounds.blocks[f"{b['dataset']}|{b['classifier']}"]
                block.repeats = schedule.next(block.repeats)
                block.looks.append(block.repeats)
        scored = score(judged.tables, judged.tables["verdicts"], truth)
        scored["page"] = page
        scored["repeats"] = np.mean([b.repeats for b in rounds.blocks.values()])
        out.append(scored)
    return pd.concat(out, ignore_index=True)
