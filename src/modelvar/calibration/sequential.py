"""Sequential studies calibrated (issues 56, 68): simulated claims run by the study's own
stopping rule under the page's two tiers, and simulated pages judged round after round by the
Findings' own code.

**Claims** (:func:`run_claims`): pages of claims (:mod:`modelvar.study.claim_paths`) whose
hypotheses are decided as the page decides them (:mod:`modelvar.findings.multiplicity`: the
headline claims' under Holm, the exploratory ones' under Benjamini–Yekutieli), by the
sequential p-values of the exact boundaries, each block stopping by the study's rule, by the
same rule without futility, or never (every block to the last look, the worst case). Scored
per tier (:func:`claim_rates`): the headline family's false-claim rate (pages with any false
headline claim), the exploratory claims' false-discovery rate, and per effect size the power
(the share of claims stated correctly: told apart with the right sign, or a tie called
equivalent) and the mean repeats of its blocks. :func:`fixed_claims` judges the same claims at
a fixed number of repeats: the design the sequential one is held against.

**Mixes** (:data:`MIXES`): a page's claims by effect, in SDs of the per-repeat differences, as
real pages show them (effects 0.3 to 1.5 and ties; margins of 0.5 SD, the median of a real
page's comparisons), one effect per block.

**Pages** (:func:`run_sequential_pages`): the verdicts issue's simulated pages
(:mod:`modelvar.calibration.pages`) run round after round by the Findings' code
(:func:`play_rounds`), every stated claim of the last round scored against the truth. The same
rounds played on a fixed study's own tables say what a sequential study of its config would
have decided and spent (``benchmarks/bench_sequential_replay.py``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from modelvar.calibration.pages import SCENARIOS, score, simulate_page
from modelvar.findings.multiplicity import EXPLORATORY, HEADLINE, PROCEDURES, decide
from modelvar.study.claim_paths import simulate
from modelvar.study.rounds import Futility, Schedule

#: the equivalence margin of the mixes' claims, in SDs (module docstring)
MARGIN = 0.5
#: mixes of a page's blocks: effect (SDs) → blocks of it; each block ``CLAIMS_PER_BLOCK``
#: claims of its effect
MIXES = {
    "realistic": {0.0: 2, 0.3: 1, 0.5: 1, 0.7: 1, 1.0: 1, 1.5: 1},
    "nothing acts": {0.0: 6},
}
CLAIMS_PER_BLOCK = 3


def _tiers_decide(tiers: np.ndarray):
    """The page's decision (module docstring) of every hypothesis of claims in ``tiers``:
    which hold and each one's bound."""
    def run(star: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        held = np.zeros(star.shape, bool)
        bound = np.full(star.shape, np.nan)
        for tier in (HEADLINE, EXPLORATORY):
            mine = tiers == tier
            if not mine.any():
                continue
            p = np.where(np.isfinite(star[mine]), star[mine], 1.0).ravel()
            d = decide(p, PROCEDURES[tier])
            held[mine] = d.holds.reshape(-1, 2)
            bound[mine] = np.asarray(d.level, float).reshape(-1, 2)
        return held, bound
    return run


def page_of(mix: dict[float, int], blocks: int | None = None,
            claims_per_block: int = CLAIMS_PER_BLOCK, tier: str = HEADLINE):
    """The claims of a page of ``mix`` (effect → blocks; ``blocks``: that many blocks, the
    mix repeated and cut): effects, margins, each claim's block and tier."""
    kinds = [effect for effect, n in mix.items() for _ in range(n)]
    if blocks is not None:
        kinds = [kinds[i % len(kinds)] for i in range(blocks)]
    effects = np.repeat(kinds, claims_per_block).astype(float)
    block = np.repeat(np.arange(len(kinds)), claims_per_block)
    return effects, np.full(effects.size, MARGIN), block, np.full(effects.size, tier)


def run_claims(effects, margins, blocks, tiers, *, schedule: Schedule, pages: int, seed: int,
               stop: str = "rule", futility: Futility | None = None,
               tails: float | None = None):
    """Simulated pages of these claims (module docstring), decided by the page's tiers."""
    rng = np.random.default_rng([seed, schedule.start, schedule.step, schedule.max, 68])
    return simulate(effects, margins, blocks, schedule, futility or Futility(),
                    decide=_tiers_decide(np.asarray(tiers)), pages=pages, rng=rng, stop=stop,
                    tails=tails)


def fixed_claims(effects, margins, blocks, tiers, *, repeats: int, pages: int, seed: int,
                 tails: float | None = None):
    """The same claims at a fixed number of repeats (one look)."""
    return run_claims(effects, margins, blocks, tiers, schedule=Schedule(repeats, 1, repeats),
                      pages=pages, seed=seed, tails=tails)


def claim_rates(paths, effects, tiers) -> dict[str, float]:
    """The rates of simulated pages (module docstring): per tier the false-claim rates, per
    effect the power and mean repeats of its blocks."""
    effects, tiers = np.asarray(effects, float), np.asarray(tiers)
    out: dict[str, float] = {}
    head = tiers == HEADLINE
    if head.any():
        out["headline: pages with a false claim"] = float(paths.false[:, head].any(1).mean())
    if (~head).any():
        made = paths.holds[:, ~head].sum(1)
        out["exploratory: FDR"] = float(np.mean(paths.false[:, ~head].sum(1)
                                                / np.maximum(made, 1)))
    correct = _correct(paths, effects, MARGIN)
    blocks_of = np.repeat(np.arange(paths.repeats.shape[1]),
                          effects.size // paths.repeats.shape[1])
    for effect in sorted(set(effects)):
        mine = effects == effect
        out[f"power at {effect:g}"] = float(correct[:, mine].mean())
        mine_blocks = np.unique(blocks_of[mine])
        out[f"repeats at {effect:g}"] = float(paths.repeats[:, mine_blocks].mean())
    out["mean repeats per block"] = float(paths.repeats.mean())
    return out


def per_claim(effect: float, *, schedule: Schedule, paths: int, seed: int,
              margin: float = MARGIN, level: float = 0.05, stop: str = "rule",
              futility: Futility | None = None, tails: float | None = None,
              levels=None) -> tuple[float, float]:
    """One claim of ``effect`` SDs alone at ``level`` (before the page's control), ``paths``
    times: its power (stated correctly: told apart with the right sign, or equivalent where
    within the margin; a tie only by its equivalence) and mean repeats. Claims alone do not
    interact, so the paths run as one page of ``paths`` blocks."""
    from modelvar.study.claim_paths import _bonferroni

    rng = np.random.default_rng([seed, int(round(effect * 1000)), schedule.max, 68])
    kw = {} if levels is None else {"levels": levels}
    out = simulate(np.full(paths, float(effect)), np.full(paths, margin), np.arange(paths),
                   schedule, futility or Futility(), decide=_bonferroni(level), pages=1,
                   rng=rng, stop=stop, tails=tails, **kw)
    right = _correct(out, np.full(paths, float(effect)), margin)[0]
    return float(right.mean()), float(out.repeats.mean())


def _correct(paths, effects: np.ndarray, margin: float) -> np.ndarray:
    """Claims stated correctly (pages × claims): a tie called equivalent; an effect told apart
    with its sign, or called equivalent where it is within the margin."""
    good = paths.holds & ~paths.false
    return good & np.where(effects == 0, paths.equivalent,
                           ~paths.equivalent | (np.abs(effects) < margin))


def fixed_power(effect: float, repeats: int, *, paths: int, seed: int, margin: float = MARGIN,
                level: float = 0.05) -> float:
    """The power of one claim of ``effect`` SDs alone at ``level`` with ``repeats`` repeats
    and one look (as :func:`per_claim` scores it), from ``paths`` simulated claims at once."""
    from scipy.stats import t as student

    rng = np.random.default_rng([seed, int(round(effect * 1000)), repeats, 6868])
    x = effect + rng.standard_normal((paths, repeats))
    mean, sd = x.mean(axis=1), x.std(axis=1, ddof=1)
    se = sd / np.sqrt(repeats)
    told = (2 * student.sf(np.abs(mean) / se, repeats - 1) <= level) & (
        np.sign(mean) == np.sign(effect))
    same = np.maximum(student.sf((mean + margin) / se, repeats - 1),
                      student.cdf((mean - margin) / se, repeats - 1)) <= level
    if effect == 0:
        return float(same.mean())
    return float((same & (abs(effect) < margin) | (told & ~same)).mean())


def equal_power_repeats(effect: float, power: float, *, paths: int, seed: int,
                        margin: float = MARGIN, level: float = 0.05, most: int = 200,
                        cap: float = 0.99) -> float | None:
    """The repeats a fixed design (one look) needs for ``power`` on a claim of ``effect`` SDs
    (at most ``cap``: a power of 1.000 in a simulation is no target a fixed design can be
    sized to): the fewest whole repeats that reach it, less the share of the last repeat the
    power did not need (linear between the two counts, so that a ratio to it is not rounded
    to a whole repeat); None beyond ``most``."""
    target = min(power, cap)
    low, high = 2, 3
    while fixed_power(effect, high, paths=paths, seed=seed, margin=margin, level=level) < target:
        low, high = high, high * 2
        if low >= most:
            return None
    while high - low > 1:
        mid = (low + high) // 2
        reached = fixed_power(effect, mid, paths=paths, seed=seed, margin=margin,
                              level=level) >= target
        low, high = (low, mid) if reached else (mid, high)
    if high <= 2:
        return float(high)
    below = fixed_power(effect, high - 1, paths=paths, seed=seed, margin=margin, level=level)
    above = fixed_power(effect, high, paths=paths, seed=seed, margin=margin, level=level)
    return float(high - 1 + (target - below) / (above - below)) if above > below \
        else float(high)


def play_rounds(tables: dict[str, pd.DataFrame], rounds, *, weak_below: float = 0.5):
    """A sequential study's rounds played on tables that hold every block's repeats up to the
    last look (``summary``, ``agreement``, ``runs`` and ``roles``): each round judged by the
    page's own code (:func:`modelvar.findings.study.judge_sequential`) on the repeats its
    blocks have, stopped by :func:`modelvar.study.stopping.block_status`, until every block has
    stopped. A repeat's tables do not depend on the schedule, so on a fixed study's tables this
    is what a sequential study of the same config decides and spends. Returns the last round's
    judged page; ``rounds`` is left as the study ends."""
    from modelvar.findings.study import judge_sequential
    from modelvar.study.stopping import OPEN, advance

    while True:
        part = {}
        for key, t in tables.items():
            if key == "roles":
                continue
            limit = (t["dataset"].astype(str) + "|" + t["classifier"].astype(str)).map(
                {b: block.repeats for b, block in rounds.blocks.items()})
            part[key] = t[(t["repeat"] < limit).to_numpy()]
        judged = judge_sequential(part["summary"], part["agreement"], part["runs"],
                                  tables["roles"], rounds.for_findings(),
                                  weak_below=weak_below)
        statuses = {f"{b['dataset']}|{b['classifier']}": b["status"]
                    for _, b in judged.tables["blocks"].iterrows()}
        if OPEN not in statuses.values():
            return judged
        advance(rounds, statuses)


def run_sequential_pages(name: str, *, pages: int, schedule: Schedule, seed: int,
                         decide: str = "all", datasets: int = 2,
                         weak_below: float = 0.5) -> pd.DataFrame:
    """Simulated pages of a sequential study judged by the page's own code (:func:`play_rounds`)
    until every block has stopped; the last round's claims scored against the truth
    (:func:`score`), one row per claim with its page and the page's mean repeats per block
    (``repeats``)."""
    from modelvar.study.rounds import Rounds

    rng = np.random.default_rng([seed, schedule.max, list(SCENARIOS).index(name), 56])
    out = []
    for page in range(pages):
        tables, truth = simulate_page(SCENARIOS[name], repeats=schedule.max,
                                      datasets=datasets, rng=rng)
        rounds = Rounds.first(schedule, tables["roles"], decide)
        judged = play_rounds(tables, rounds, weak_below=weak_below)
        scored = score(judged.tables, judged.tables["verdicts"], truth)
        scored["page"] = page
        scored["repeats"] = np.mean([b.repeats for b in rounds.blocks.values()])
        out.append(scored)
    return pd.concat(out, ignore_index=True)
