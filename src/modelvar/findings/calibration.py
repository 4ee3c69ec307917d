"""The Findings' verdicts calibrated: simulated pages with a known truth, judged by the page's
own code (:func:`modelvar.findings.study.judge_study`), and every claim scored against it.

A **page** is a study of ``datasets`` datasets × two classifiers (``a``, ``b``) in the default
config's design (``both``: data rel 0.2, categorical label 0.1, hparam rel 0.1, 50 % train,
seed per run: 32 factorial cells, the control and each source alone), R repeats of ``runs``
runs. Per dataset × classifier × cell × repeat × run, a run's accuracy is

    base + Σ_f (±α_f / 2 + ±δ_{f,r} / 2) + b_r + σ_c · ε,    ε ~ N(0, 1),

(± by the family's level; δ_{f,r} ~ N(0, τ²) the family's interaction with the repeat, b_r ~
N(0, σ_R²) the repeat), so the factorial grid's true variance components are α_f² / 4 per
family and σ_R² for the repeat; σ_c = √(Σ_{f active} σ_f²), the spread each active source
adds within a repeat. A cell's mean disagreement in repeat r is μ_c · exp(u_r + v_cr), u_r ~
N(0, 0.15²) shared by every cell (a harder test set), v_cr ~ N(0, 0.1²), with μ_c = 1 − Π_{f
active} (1 − μ_f); its percent agreement 1 − that. Classifier b is classifier a with its
disagreement and spreads multiplied by ``b_factor``.

**Scenarios** (:data:`SCENARIOS`):

* ``tie``: at the top, two sources tie — equal spread σ and disagreement μ (50 % train and seed
  per run) — above three weaker ones; in the grid, two families tie in their effect α (data and
  training fraction) above the others; classifiers alike (every classifier comparison a null);
* ``null``: nothing acts: every cell the same spread and disagreement (a seed-like baseline
  that no family changes), no family, repeat or interaction effect, classifiers alike;
* ``planted``: one source clearly largest (50 % train), one family dominant in the grid,
  classifier b's disagreement 0.7 × a's: the power.

**Scored claims**, each counted claim of the page (:func:`modelvar.findings.study.
stated_claims`) that held, against the truth: a leader told apart is false unless its true
value exceeds every other's; "about equal" (equivalent) is false unless the true ratio lies
within the margin; a difference told apart is false unless its true sign is the one said; a
largest share is false unless its true component exceeds every other's. The rates
(:func:`rates`): the page's false-discovery proportion averaged over pages (the FDR), the share
of pages with any false claim, and per kind of claim the share of its rows that made a false
claim (per "most" sentence, per share ranking) and, where the truth allows a claim, the share
made (the power).

**Sequential studies** (:mod:`modelvar.findings.sequential`, issue 56):
:func:`run_sequential_pages` runs the same pages round after round, each block stopping where
the page's own code stops it, and scores the last round's claims; :func:`sequential_claims` is
a claim-level model of it, fast enough for thousands of pages: per block ``claims_per_block``
paired comparisons whose per-repeat differences are N(δ, 1) (δ by the block's type,
:data:`SEQUENTIAL_MIX`), each a t-test of a difference and two one-sided tests of equivalence
(margin 0.5 SD), stopped by the same rule; :func:`fixed_claims` judges the same comparisons at
a fixed number of repeats, the design it is held against.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from modelvar.findings.paired import (
    CONTRADICTED,
    EQUIVALENCE_RATIO,
    EQUIVALENT,
    SUPPORTED,
)
from modelvar.study import families
from modelvar.study.cells import Cell
from modelvar.study.design import cell_roles

#: the default config's design, the one every simulated page has
PERTURBATION = {"data": ["none", {"rel": 0.2}], "categorical": ["none", {"label": 0.1}],
                "hparam": ["none", {"rel": 0.1}], "downsample": [0.5, 1.0],
                "model_seed": ["per-run"]}
#: the families of the design (in the config's order)
FAMILIES = tuple(PERTURBATION)
#: the families that vary in the factorial grid (the model seed is per run in every grid cell)
GRID = tuple(f for f in FAMILIES if len(PERTURBATION[f]) > 1)


@dataclass(frozen=True)
class Scenario:
    """What acts, per family: ``spread`` σ_f (within a repeat) and ``disagreement`` μ_f of
    the source alone, ``effect`` α_f on the mean accuracy in the grid; the repeat's SD, the
    families' interaction with it (τ), the shared per-repeat disagreement factor's SD, and
    classifier b's factor on disagreement and spread. ``floor``: every cell's own spread and
    disagreement (the null's seed-like baseline)."""

    spread: dict[str, float]
    disagreement: dict[str, float]
    effect: dict[str, float]
    repeat_sd: float = 0.005
    interaction_sd: float = 0.004
    shared_sd: float = 0.15
    b_factor: float = 1.0
    floor: float = 0.0
    floor_disagreement: float = 0.0


SCENARIOS = {
    "tie": Scenario(
        spread={"data": 0.008, "categorical": 0.006, "hparam": 0.007, "downsample": 0.02,
                "model_seed": 0.02},
        disagreement={"data": 0.15, "categorical": 0.04, "hparam": 0.045, "downsample": 0.15,
                      "model_seed": 0.15},
        effect={"data": 0.03, "categorical": 0.004, "hparam": 0.006, "downsample": 0.03,
                "model_seed": 0.0}),
    "null": Scenario(
        spread=dict.fromkeys(FAMILIES, 0.0), disagreement=dict.fromkeys(FAMILIES, 0.0),
        effect=dict.fromkeys(FAMILIES, 0.0), repeat_sd=0.0, interaction_sd=0.0,
        shared_sd=0.0, floor=0.01, floor_disagreement=0.1),
    "planted": Scenario(
        spread={"data": 0.008, "categorical": 0.006, "hparam": 0.007, "downsample": 0.03,
                "model_seed": 0.012},
        disagreement={"data": 0.05, "categorical": 0.04, "hparam": 0.045, "downsample": 0.25,
                      "model_seed": 0.1},
        effect={"data": 0.01, "categorical": 0.004, "hparam": 0.006, "downsample": 0.05,
                "model_seed": 0.0}, b_factor=0.7),
}


def _cells() -> tuple[list[str], dict[str, tuple]]:
    roles = cell_roles(PERTURBATION, "both")
    return list(roles), roles


@dataclass
class Truth:
    """The true values behind a simulated page: per (dataset, classifier, cell) the expected
    within-repeat spread and disagreement; per (dataset, classifier, response) the true
    variance component of each factor (by the tables' component names)."""

    spread: dict[tuple, float] = field(default_factory=dict)
    disagreement: dict[tuple, float] = field(default_factory=dict)
    components: dict[tuple, dict[str, float]] = field(default_factory=dict)


def _active(cell: str) -> list[str]:
    levels = Cell.parse(cell).levels()
    return [f for f in FAMILIES if levels[f] != families.family(f).none_id]


def simulate_page(scenario: Scenario, *, repeats: int, datasets: int = 2, runs: int = 10,
                  rng: np.random.Generator) -> tuple[dict[str, pd.DataFrame], Truth]:
    """The summary, agreement and runs tables of one simulated page (module docstring), the
    roles of its cells, and the truth behind them."""
    cells, roles = _cells()
    truth = Truth()
    summary, agreement, runs_rows = [], [], []
    levels = {c: Cell.parse(c).levels() for c in cells}
    active = {c: _active(c) for c in cells}
    for d in range(datasets):
        dataset = f"d{d}"
        b = rng.normal(0, scenario.repeat_sd, repeats)
        u = rng.normal(0, scenario.shared_sd, repeats)
        delta = {f: rng.normal(0, scenario.interaction_sd, repeats) for f in FAMILIES}
        for classifier, factor in (("a", 1.0), ("b", scenario.b_factor)):
            sign = {c: {f: (0.5 if f in active[c] else -0.5) for f in FAMILIES} for c in cells}
            for c in cells:
                spread = factor * math.sqrt(scenario.floor ** 2 + sum(
                    scenario.spread[f] ** 2 for f in active[c]))
                keep = 1.0 - scenario.floor_disagreement
                for f in active[c]:
                    keep *= 1.0 - scenario.disagreement[f]
                mu = factor * (1.0 - keep)
                truth.spread[(dataset, classifier, c)] = spread
                truth.disagreement[(dataset, classifier, c)] = mu
                mean = 0.8 + b + sum(sign[c][f] * (scenario.effect[f] + delta[f])
                                     for f in FAMILIES)
                acc = mean[:, None] + spread * rng.standard_normal((repeats, runs))
                dis = mu * np.exp(u + rng.normal(0, 0.1, repeats)) if mu > 0 else \
                    np.zeros(repeats)
                dis = np.minimum(dis, 1.0)
                base = {"dataset": dataset, "classifier": classifier, "cell": c, **levels[c]}
                sd = acc.std(axis=1, ddof=1)
                for r in range(repeats):
                    row = {**base, "repeat": r, "subset": "all"}
                    summary += [{**row, "metric": "accuracy", "mean": acc[r].mean(),
                                 "sd": sd[r]},
                                {**row, "metric": "churn", "mean": dis[r], "sd": 0.0},
                                {**row, "metric": "pa", "mean": 1 - dis[r], "sd": 0.0}]
                    agreement.append({**base, "repeat": r, "all_runs_identical": dis[r] == 0,
                                      "unstable_frac": dis[r], "n": 500, "bias_01": 0.2,
                                      "variance_01": dis[r] / 2})
                    for k in range(runs):
                        runs_rows.append({**base, "repeat": r, "run": k,
                                          "accuracy": acc[r, k],
                                          "data_changed_frac": 1.0 if "data" in active[c]
                                          else 0.0,
                                          "data_mean_abs_shift_sd": 0.1, "cat_changed_frac": 0.0})
            for response in ("accuracy", "pa"):
                truth.components[(dataset, classifier, response)] = _true_components(
                    scenario, classifier == "b", response)
    tables = {"summary": pd.DataFrame(summary), "agreement": pd.DataFrame(agreement),
              "runs": pd.DataFrame(runs_rows)}
    tables["roles"] = {(f"d{d}", clf): roles for d in range(datasets) for clf in ("a", "b")}
    return tables, truth


def _true_components(scenario: Scenario, is_b: bool, response: str) -> dict[str, float]:
    """Each factor's true variance component in the grid (module docstring), by its name in
    the components table."""
    from modelvar.findings.components import REPEAT

    out = {}
    if response == "accuracy":
        for f in GRID:
            out[families.family(f).title] = scenario.effect[f] ** 2 / 4
        out[REPEAT] = scenario.repeat_sd ** 2
        return out
    # per-repeat agreement: each family's true effect on the grid's mean disagreement; the
    # repeat's component from the shared factor (approximately: μ̄ · SD of exp(u))
    factor = scenario.b_factor if is_b else 1.0
    fixed = [f for f in FAMILIES if f not in GRID]
    grid = np.array(list(itertools.product((0, 1), repeat=len(GRID))))
    values = []
    for on in grid:
        keep = 1.0 - scenario.floor_disagreement
        for f in fixed:
            keep *= 1.0 - scenario.disagreement[f]
        for f, flag in zip(GRID, on, strict=True):
            keep *= 1.0 - scenario.disagreement[f] * flag
        values.append(factor * (1 - keep))
    values = np.array(values)
    for i, f in enumerate(GRID):
        diff = values[grid[:, i] == 1].mean() - values[grid[:, i] == 0].mean()
        out[families.family(f).title] = diff ** 2 / 4
    s = scenario.shared_sd
    out[REPEAT] = (values.mean() ** 2) * (math.exp(s ** 2) - 1) * math.exp(s ** 2)
    return out


def _strictly_first(values: dict[str, float], named: str, tolerance: float = 1e-12) -> bool:
    top = values[named]
    return all(top > v + tolerance for k, v in values.items() if k != named)


def _within(ratio: float, margin: float) -> bool:
    return 1 / margin <= ratio <= margin


def score(judged, truth: Truth, margin: float = EQUIVALENCE_RATIO) -> pd.DataFrame:
    """Every counted claim of a judged page (its ``verdicts`` table) with ``made`` (it holds:
    a claim is stated), ``false`` (stated and false) and ``possible`` (a true claim of its
    kind could be made) against ``truth`` (module docstring)."""
    t = judged.tables
    verdicts = t["verdicts"]
    rows = []
    for i, claim in verdicts.iterrows():
        table = t[claim["table"]]
        row = _row_of(table, claim)
        made, false, possible = bool(claim["holds"]), False, False
        kind = claim["kind"]
        if kind == "leader":
            values = _measure_values(truth, row, t["sources"])
            possible = _strictly_first(values, row["leader"])
            if made and row["verdict"] == SUPPORTED:
                false = not possible
            elif made and row["verdict"] == EQUIVALENT:
                r = values[row["leader"]] / values[row["runner_up"]] \
                    if values[row["runner_up"]] > 0 else np.inf
                false = not _within(r, margin)
        elif kind in ("classifiers", "combined"):
            a, b = _pair(truth, row, t["sources"], kind)
            possible = a != b
            if made:
                verdict = row["verdict"]
                if verdict == EQUIVALENT:
                    false = not (b > 0 and _within(a / b, margin))
                elif verdict == SUPPORTED:
                    false = not a > b
                elif verdict == CONTRADICTED:
                    false = not a < b
        elif kind == "largest share":
            named = row["component"]
            comps = truth.components[(row["dataset"], row["classifier"], row["response"])]
            possible = _strictly_first(comps, max(comps, key=comps.get))
            false = made and not _strictly_first(comps, named)
        elif kind == "seed claim" and row["claim"] == "downsampling_largest":
            down = _downsampling_truth(truth, row, t["sources"])
            possible = down
            if made:
                false = (row["status"] == SUPPORTED and not down) or \
                    (row["status"] == CONTRADICTED and down)
        else:
            continue
        rows.append({"kind": kind, "made": made, "false": bool(false),
                     "possible": bool(possible), "claim": i})
    return pd.DataFrame(rows, columns=["kind", "made", "false", "possible", "claim"])


def _row_of(table: pd.DataFrame, claim: pd.Series) -> pd.Series:
    return table.loc[claim["row"]]


def _measure_values(truth: Truth, row, sources: pd.DataFrame) -> dict[str, float]:
    """True value of the row's measure for every source level alone of its dataset ×
    classifier (by level)."""
    part = sources[(sources["dataset"] == row["dataset"])
                   & (sources["classifier"] == row["classifier"])
                   & ~sources["source"].isin(["control", "all combined", "test set"])]
    table = truth.spread if row["measure"] == "accuracy_sd" else truth.disagreement
    return {r["level"]: table[(row["dataset"], row["classifier"], r["cell"])]
            for _, r in part.iterrows()}


def _pair(truth: Truth, row, sources: pd.DataFrame, kind: str) -> tuple[float, float]:
    if kind == "combined":
        return (truth.disagreement[(row["dataset"], row["classifier"], row["cell"])],
                truth.disagreement[(row["dataset"], row["classifier"], row["combined_cell"])])
    table = truth.spread if row["measure"] == "accuracy_sd" else truth.disagreement
    cell = sources[(sources["dataset"] == row["dataset"])
                   & (sources["level"] == row["level"])]["cell"].iloc[0]
    return (table[(row["dataset"], row["classifier_a"], cell)],
            table[(row["dataset"], row["classifier_b"], cell)])


def _downsampling_truth(truth: Truth, row, sources: pd.DataFrame) -> bool:
    mine = sources[(sources["dataset"] == row["dataset"])
                   & (sources["classifier"] == row["classifier"])
                   & ~sources["source"].isin(["control", "all combined", "test set"])]
    down = mine[mine["source"] == "downsample"]["cell"].iloc[0]
    key = (row["dataset"], row["classifier"])
    return all(t[(*key, down)] > t[(*key, c)] for t in (truth.spread, truth.disagreement)
               for c in mine[mine["source"] != "downsample"]["cell"])


def run_pages(name: str, *, pages: int, repeats: int, seed: int, datasets: int = 2,
              weak_below: float = 0.5) -> pd.DataFrame:
    """Simulate and judge ``pages`` pages of scenario ``name``; one row per scored claim with
    its page."""
    from modelvar.findings.study import judge_study

    rng = np.random.default_rng([seed, repeats, list(SCENARIOS).index(name)])
    out = []
    for page in range(pages):
        tables, truth = simulate_page(SCENARIOS[name], repeats=repeats, datasets=datasets,
                                      rng=rng)
        judged = judge_study(tables["summary"], tables["agreement"], tables["runs"],
                             tables["roles"], weak_below=weak_below)
        scored = score(judged, truth)
        scored["page"] = page
        out.append(scored)
    return pd.concat(out, ignore_index=True)


def rates(scored: pd.DataFrame) -> dict[str, float]:
    """The false-claim rates and the power of scored pages (module docstring)."""
    by_page = scored.groupby("page")
    made = by_page["made"].sum()
    false = by_page["false"].sum()
    out = {"pages": int(scored["page"].nunique()),
           "FDR": float((false / made.clip(lower=1)).mean()),
           "pages with a false claim": float((false > 0).mean())}
    for kind, label in (("leader", "most"), ("largest share", "largest share"),
                        ("classifiers", "classifiers"), ("combined", "combined")):
        part = scored[scored["kind"] == kind]
        if part.empty:
            continue
        out[f"false per {label}"] = float(part["false"].mean())
        pages = part.groupby("page")["false"].any()
        out[f"pages with a false {label}"] = float(pages.mean())
        possible = part[part["possible"]]
        out[f"power {label}"] = float((possible["made"] & ~possible["false"]).mean()) \
            if len(possible) else np.nan
    return out


# ------------------------------------------------------------------ sequential studies
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


def sequential_claims(blocks: list[str], *, schedule, pages: int, seed: int,
                      claims_per_block: int = 3, margin: float = 0.5) -> dict[str, float]:
    """Simulated pages of a sequential study at the claim level (module docstring): per block
    ``claims_per_block`` paired comparisons of its type (a key of :data:`SEQUENTIAL_MIX`),
    analysed at the schedule's looks with sequential p-values
    (:mod:`modelvar.findings.sequential`) under Benjamini–Yekutieli, each block stopping once
    its claims hold or cannot be decided by the last look (80 % power at the seen difference,
    at the level left: :func:`~modelvar.findings.sequential.reach_factor`), the equivalence
    margin ``margin`` SDs.
    Returns the FDR, the share of pages with a false claim, the power per block type and the
    mean repeats per block."""
    from modelvar.findings.multiplicity import next_boundary
    from modelvar.findings.multiplicity import threshold as by_threshold
    from modelvar.findings.sequential import reach_factor

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
            need = need * reach_factor(next_boundary(np.minimum(best, 1)), schedule, n)
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
    from modelvar.findings.multiplicity import threshold as by_threshold

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
        scored = score(judged, truth)
        scored["page"] = page
        scored["repeats"] = np.mean([b.repeats for b in rounds.blocks.values()])
        out.append(scored)
    return pd.concat(out, ignore_index=True)
