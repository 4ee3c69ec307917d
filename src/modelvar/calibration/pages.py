"""The Findings' verdicts calibrated: simulated pages with a known truth, judged by the page's
own code (:func:`modelvar.findings.study.judge_study`), and every claim scored against it.

A **page** is a study of ``datasets`` datasets × two classifiers (``a``, ``b``) in the default
config's design (``both``: data rel 0.2, categorical label 0.1, hparam rel 0.1, 50 % train,
seed per run: 32 factorial cells, the control and each source alone), R repeats of ``runs``
runs. Per dataset × classifier × cell × repeat × run, a run's accuracy is

    base + Σ_f (±α_f / 2 + ±δ_{f,r} / 2) + b_r + σ_c · ε,    ε ~ N(0, 1),

(± by the family's level; δ_{f,r} ~ N(0, τ²) the family's interaction with the repeat, b_r the
repeat's effect with SD σ_R), so the factorial grid's true variance components are α_f² / 4
per family and σ_R² for the repeat; σ_c = m_k √(Σ_{f active} σ_f²), the spread each active
source adds within a repeat. A cell's mean disagreement in repeat r is m_k μ_c · exp(u_r +
v_cr), u_r (SD 0.15) shared by every cell (a harder test set), v_cr ~ N(0, 0.1²), with μ_c =
1 − Π_{f active} (1 − μ_f); its percent agreement 1 − that. m_k is dataset k's scale
(log-normal, SD ``dataset_sd`` on the log scale; 1 where it is 0): datasets differ in how much
everything varies, not in which source varies most. Classifier b is classifier a with its
disagreement and spreads multiplied by a factor f_k (log-normal about ``b_factor``, SD
``b_factor_sd``); with ``b_seedless`` b takes no model seed: its runs coincide under the seed
alone (its spread and disagreement there 0). The repeat's effects b_r and u_r are normal, or
heavy-tailed with the same variance (``repeat_tails``: Student-t with 5 degrees of freedom, or
10 % of repeats three times as wide).

**Scenarios** (:data:`SCENARIOS`):

* ``tie``: at the top, two sources tie — equal spread σ and disagreement μ (50 % train and seed
  per run) — above three weaker ones; in the grid, two families tie in their effect α (data and
  training fraction) above the others; classifiers alike (every classifier comparison a null);
* ``null``: nothing acts: every cell the same spread and disagreement (a seed-like baseline
  that no family changes), no family, repeat or interaction effect, classifiers alike;
* ``planted``: one source clearly largest (50 % train), one family dominant in the grid,
  classifier b's disagreement 0.7 × a's: the power;
* ``heavy tails`` and ``contaminated``: the tie, with a family tied with the repeat in the grid
  (α²/4 = σ_R²), the repeat's effects Student-t(5) or 10 %-contaminated;
* ``twins``: the planted sources — many near-certain claims — with two copies of one classifier
  (every classifier comparison a null), the case in which one family of claims let strong
  claims raise the bar for a false one;
* ``over datasets``: the planted sources at per-dataset scales varying 20 % (log SD), classifier
  b's disagreement and spread half of a's on every dataset (10 % log SD about it): the
  statements over datasets' power;
* ``seedless``: the planted sources at scales varying 20 %, classifier b a copy of a that takes
  no model seed (its runs coincide under the seed alone): where the seed acts a is the less
  reproducible, everywhere else the two tie.

**Scored claims**: every claim of the page with a test (its ``verdicts`` table), scored by its
kind (:attr:`modelvar.findings.kinds.ClaimKind.score`) against the truth: a claim that holds is
false where what it says is not so (a tie told apart, a ratio off the margin called about
equal, a sign stated wrongly, a leader or largest share that is not first); an undeclared kind
is an error. The rates (:func:`rates`), per tier (:mod:`modelvar.findings.multiplicity`): of
the headline claims, the share of pages with any false one (what Holm bounds) and the power;
of the exploratory ones, their false-discovery rate (averaged over pages, what
Benjamini–Yekutieli bounds); per kind the share of its rows that made a false claim, of the
pages that carry one, and where the truth allows a claim the share made (the power).
:func:`legacy_claims` decides the same pages as the page did before the tiers (one
Benjamini–Yekutieli family over every claim's smallest p), so the benchmark shows both.

Sequential studies are calibrated on the same pages by :mod:`modelvar.calibration.sequential`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from modelvar.findings import kinds as registry
from modelvar.findings.multiplicity import EXPLORATORY, HEADLINE
from modelvar.findings.multiplicity import threshold as by_threshold
from modelvar.findings.paired import EQUIVALENCE_RATIO
from modelvar.findings.truth import Truth
from modelvar.study import families
from modelvar.study.cells import Cell
from modelvar.study.design import cell_roles

__all__ = ["SCENARIOS", "Scenario", "Truth", "legacy_claims", "rates", "run_pages", "score",
           "simulate_page"]

#: the default config's design, the one every simulated page has
PERTURBATION = {"data": ["none", {"rel": 0.2}], "categorical": ["none", {"label": 0.1}],
                "hparam": ["none", {"rel": 0.1}], "downsample": [0.5, 1.0],
                "model_seed": ["per-run"]}
#: the families of the design (in the config's order)
FAMILIES = tuple(PERTURBATION)
#: the families that vary in the factorial grid (the model seed is per run in every grid cell)
GRID = tuple(f for f in FAMILIES if len(PERTURBATION[f]) > 1)
#: how the repeats' effects are drawn (module docstring), each with variance 1
TAILS = ("normal", "t5", "contaminated", "t3")


@dataclass(frozen=True)
class Scenario:
    """What acts, per family: ``spread`` σ_f (within a repeat) and ``disagreement`` μ_f of
    the source alone, ``effect`` α_f on the mean accuracy in the grid; the repeat's SD, the
    families' interaction with it (τ), the shared per-repeat disagreement factor's SD, and
    classifier b's factor on disagreement and spread. ``floor``: every cell's own spread and
    disagreement (the null's seed-like baseline). The rest: module docstring."""

    spread: dict[str, float]
    disagreement: dict[str, float]
    effect: dict[str, float]
    repeat_sd: float = 0.005
    interaction_sd: float = 0.004
    shared_sd: float = 0.15
    b_factor: float = 1.0
    floor: float = 0.0
    floor_disagreement: float = 0.0
    repeat_tails: str = "normal"
    dataset_sd: float = 0.0
    b_factor_sd: float = 0.0
    b_seedless: bool = False


_TIE = {"spread": {"data": 0.008, "categorical": 0.006, "hparam": 0.007, "downsample": 0.02,
                   "model_seed": 0.02},
        "disagreement": {"data": 0.15, "categorical": 0.04, "hparam": 0.045, "downsample": 0.15,
                         "model_seed": 0.15},
        "effect": {"data": 0.03, "categorical": 0.004, "hparam": 0.006, "downsample": 0.03,
                   "model_seed": 0.0}}
_PLANTED = {"spread": {"data": 0.008, "categorical": 0.006, "hparam": 0.007, "downsample": 0.03,
                       "model_seed": 0.012},
            "disagreement": {"data": 0.05, "categorical": 0.04, "hparam": 0.045,
                             "downsample": 0.25, "model_seed": 0.1},
            "effect": {"data": 0.01, "categorical": 0.004, "hparam": 0.006, "downsample": 0.05,
                       "model_seed": 0.0}}
#: the tie with the data family tied with the repeat in the grid: (0.02)² / 4 = 0.01²
_REPEAT_TIE = {**_TIE, "effect": {**_TIE["effect"], "data": 0.02, "downsample": 0.006}}

SCENARIOS = {
    "tie": Scenario(**_TIE),
    "null": Scenario(
        spread=dict.fromkeys(FAMILIES, 0.0), disagreement=dict.fromkeys(FAMILIES, 0.0),
        effect=dict.fromkeys(FAMILIES, 0.0), repeat_sd=0.0, interaction_sd=0.0,
        shared_sd=0.0, floor=0.01, floor_disagreement=0.1),
    "planted": Scenario(**_PLANTED, b_factor=0.7),
    "heavy tails": Scenario(**_REPEAT_TIE, repeat_sd=0.01, interaction_sd=0.003,
                            repeat_tails="t5"),
    "contaminated": Scenario(**_REPEAT_TIE, repeat_sd=0.01, interaction_sd=0.003,
                             repeat_tails="contaminated"),
    "twins": Scenario(**_PLANTED),
    "over datasets": Scenario(**_PLANTED, b_factor=0.5, dataset_sd=0.2, b_factor_sd=0.1),
    "seedless": Scenario(**_PLANTED, dataset_sd=0.2, b_seedless=True),
}


def _tailed(rng: np.random.Generator, tails: str, sd: float, n: int) -> np.ndarray:
    """``n`` draws of SD ``sd`` with the given tails (module docstring)."""
    if tails == "normal":
        return rng.normal(0, sd, n)
    if tails == "t5":
        return sd * rng.standard_t(5, n) / math.sqrt(5 / 3)
    if tails == "contaminated":
        wide = rng.random(n) < 0.1
        return sd / math.sqrt(1.8) * rng.standard_normal(n) * np.where(wide, 3.0, 1.0)
    if tails == "t3":
        return sd * rng.standard_t(3, n) / math.sqrt(3)
    raise ValueError(f"repeat_tails {tails!r} is none of {TAILS}")


def _cells(perturbation: dict, design: str) -> tuple[list[str], dict[str, tuple]]:
    roles = cell_roles(perturbation, design)
    return list(roles), roles


def _active(cell: str) -> list[str]:
    levels = Cell.parse(cell).levels()
    return [f for f in FAMILIES if levels[f] != families.family(f).none_id]


def _cell_truth(scenario: Scenario, active: list[str], factor: float,
                seedless: bool) -> tuple[float, float]:
    """(spread, disagreement) of a cell with these active families, for a classifier of
    ``factor``; a seedless classifier's model seed adds nothing."""
    acting = [f for f in active if not (seedless and f == "model_seed")]
    spread = factor * math.sqrt(scenario.floor ** 2 + sum(scenario.spread[f] ** 2
                                                          for f in acting))
    keep = 1.0 - scenario.floor_disagreement
    for f in acting:
        keep *= 1.0 - scenario.disagreement[f]
    return spread, factor * (1.0 - keep)


def simulate_page(scenario: Scenario, *, repeats: int, datasets: int = 2, runs: int = 10,
                  rng: np.random.Generator, perturbation: dict | None = None,
                  design: str = "both") -> tuple[dict[str, pd.DataFrame], Truth]:
    """The summary, agreement and runs tables of one simulated page (module docstring), the
    roles of its cells, and the truth behind them; ``perturbation`` and ``design``: another
    design than the default config's (families left out are at their control)."""
    cells, roles = _cells(perturbation or PERTURBATION, design)
    truth = Truth(margin=EQUIVALENCE_RATIO)
    summary, agreement, runs_rows = [], [], []
    levels = {c: Cell.parse(c).levels() for c in cells}
    active = {c: _active(c) for c in cells}
    mean_scale = math.exp(scenario.dataset_sd ** 2 / 2)
    mean_b = scenario.b_factor * math.exp(scenario.b_factor_sd ** 2 / 2)
    for d in range(datasets):
        dataset = f"d{d}"
        scale = math.exp(rng.normal(0, scenario.dataset_sd)) if scenario.dataset_sd else 1.0
        b_k = scenario.b_factor * (math.exp(rng.normal(0, scenario.b_factor_sd))
                                   if scenario.b_factor_sd else 1.0)
        b = _tailed(rng, scenario.repeat_tails, scenario.repeat_sd, repeats)
        u = _tailed(rng, scenario.repeat_tails, scenario.shared_sd, repeats)
        delta = {f: rng.normal(0, scenario.interaction_sd, repeats) for f in FAMILIES}
        for classifier, factor in (("a", 1.0), ("b", b_k)):
            seedless = scenario.b_seedless and classifier == "b"
            sign = {c: {f: (0.5 if f in active[c] else -0.5) for f in FAMILIES} for c in cells}
            for c in cells:
                spread, mu = _cell_truth(scenario, active[c], factor * scale, seedless)
                truth.spread[(dataset, classifier, c)] = spread
                truth.disagreement[(dataset, classifier, c)] = mu
                if d == 0:
                    pop = (mean_b if classifier == "b" else 1.0) * mean_scale
                    spread0, mu0 = _cell_truth(scenario, active[c], pop, seedless)
                    truth.population_spread[(classifier, c)] = spread0
                    truth.population_disagreement[(classifier, c)] = mu0
                mean = 0.8 + b + sum(sign[c][f] * (scenario.effect[f] + delta[f])
                                     for f in FAMILIES)
                acc = mean[:, None] + spread * rng.standard_normal((repeats, runs))
                dis = mu * np.exp(u + rng.normal(0, 0.1, repeats)) if mu > 0 else \
                    np.zeros(repeats)
                dis = np.minimum(dis, 1.0)
                base = {"dataset": dataset, "classifier": classifier, "cell": c, **levels[c]}
                sd = acc.std(axis=1, ddof=1) if spread > 0 else np.zeros(repeats)
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
                truth.population_components[(classifier, response)] = \
                    truth.components[(dataset, classifier, response)]
    tables = {"summary": pd.DataFrame(summary), "agreement": pd.DataFrame(agreement),
              "runs": pd.DataFrame(runs_rows)}
    tables["roles"] = {(f"d{d}", clf): roles for d in range(datasets) for clf in ("a", "b")}
    return tables, truth


def _true_components(scenario: Scenario, is_b: bool, response: str) -> dict[str, float]:
    """Each factor's true variance component in the grid (module docstring), by its name in
    the components table (the same ranking on every dataset: a dataset's scale multiplies
    every component of the agreement alike)."""
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
            if not (is_b and scenario.b_seedless and f == "model_seed"):
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


def score(tables: dict[str, pd.DataFrame], verdicts: pd.DataFrame,
          truth: Truth) -> pd.DataFrame:
    """Every claim of a judged page's ``verdicts`` (its kind, tier, whether it holds, its
    verdict) scored against ``truth`` by its kind (module docstring): ``made`` (it holds: a
    claim is stated), ``false`` (stated and false) and ``possible`` (a true claim of its kind
    could be made). An undeclared kind is an error."""
    rows = []
    for i, claim in verdicts.iterrows():
        kind = registry.kind(claim["kind"])
        row = tables[claim["table"]].loc[claim["row"]]
        made = bool(claim["holds"])
        possible, false = kind.score(row, claim["verdict"] if made else "inconclusive", truth,
                                     tables)
        rows.append({"kind": claim["kind"], "tier": claim["tier"], "made": made,
                     "false": bool(false and made), "possible": bool(possible), "claim": i})
    return pd.DataFrame(rows, columns=["kind", "tier", "made", "false", "possible", "claim"])


def legacy_claims(tables: dict[str, pd.DataFrame], verdicts: pd.DataFrame,
                  kinds: tuple[str, ...]) -> pd.DataFrame:
    """The page's claims decided as before the tiers: the ``kinds`` it stated then (per-dataset
    classifier comparisons only below :data:`~modelvar.findings.over_datasets.MIN_DATASETS`
    datasets, over datasets only from there, by the Wilcoxon test), in one
    Benjamini–Yekutieli family over every claim's smallest p-value, a hypothesis holding where
    its p is at most that family's threshold (the same verdicts, from the hypotheses that
    held)."""
    from modelvar.findings.over_datasets import MIN_DATASETS

    over = tables["sources"]["dataset"].nunique() >= MIN_DATASETS
    per_dataset = [k.name for k in registry.kinds() if k.table == "comparison"]
    across = [k.name for k in registry.kinds() if k.table == "study_comparison"]
    gone = per_dataset if over else across
    out = verdicts[verdicts["kind"].isin(kinds) & ~verdicts["kind"].isin(gone)].copy()
    wilcoxon = out["kind"].isin(across)
    out.loc[wilcoxon, "p_values"] = pd.Series(
        [[float(tables["study_comparison"].loc[r, "p_wilcoxon"])]
         for r in out.loc[wilcoxon, "row"]], index=out.index[wilcoxon], dtype=object)
    out["p_value"] = [float(np.nanmin(p)) if np.isfinite(p).any() else np.nan
                      for p in out["p_values"]]
    threshold = by_threshold(out["p_value"].to_numpy(float))
    held = [[h for h, p in zip(hyps, ps, strict=True) if np.isfinite(p) and p <= threshold]
            for hyps, ps in zip(out["hypotheses"], out["p_values"], strict=True)]
    out["held"] = held
    out["holds"] = [bool(h) for h in held]
    out["verdict"] = [registry.kind(k).verdict(tables[t].loc[r], frozenset(h))
                      for k, t, r, h in zip(out["kind"], out["table"], out["row"], held,
                                            strict=True)]
    return out


def run_pages(name: str, *, pages: int, repeats: int, seed: int, datasets: int = 2,
              weak_below: float = 0.5, legacy: tuple[str, ...] = ()) -> pd.DataFrame:
    """Simulate and judge ``pages`` pages of scenario ``name``; one row per scored claim with
    its page (``legacy``: the kinds the page stated before the tiers; where given, the claims
    are also scored as decided then, rows with ``control = "legacy"``; the page's own rows
    have ``control = "tiers"``)."""
    from modelvar.findings.study import judge_study

    rng = np.random.default_rng([seed, repeats, list(SCENARIOS).index(name), datasets])
    out = []
    for page in range(pages):
        tables, truth = simulate_page(SCENARIOS[name], repeats=repeats, datasets=datasets,
                                      rng=rng)
        judged = judge_study(tables["summary"], tables["agreement"], tables["runs"],
                             tables["roles"], weak_below=weak_below)
        t = judged.tables
        scored = score(t, t["verdicts"], truth).assign(control="tiers")
        if legacy:
            scored = pd.concat([scored, score(t, legacy_claims(t, t["verdicts"], legacy), truth)
                                .assign(control="legacy")], ignore_index=True)
        scored["page"] = page
        out.append(scored)
    return pd.concat(out, ignore_index=True)


def rates(scored: pd.DataFrame) -> dict[str, float]:
    """The false-claim rates and the power of scored pages (module docstring), per tier and
    per kind."""
    pages = scored["page"].unique()
    out: dict[str, float] = {"pages": float(len(pages))}
    for tier, name in ((HEADLINE, "headline"), (EXPLORATORY, "exploratory")):
        mine = scored[scored["tier"] == tier]
        by_page = mine.groupby("page")
        false = by_page["false"].sum().reindex(pages, fill_value=0)
        made = by_page["made"].sum().reindex(pages, fill_value=0)
        out[f"{name}: pages with a false claim"] = float((false > 0).mean())
        out[f"{name}: FDR"] = float((false / made.clip(lower=1)).mean())
        possible = mine[mine["possible"]]
        out[f"{name}: power"] = float((possible["made"] & ~possible["false"]).mean()) \
            if len(possible) else np.nan
    for kind in registry.kinds():
        label = kind.name
        part = scored[scored["kind"] == label]
        if part.empty:
            continue
        out[f"false per {label}"] = float(part["false"].mean())
        out[f"pages with a false {label}"] = float(
            part.groupby("page")["false"].any().reindex(pages, fill_value=False).mean())
        possible = part[part["possible"]]
        out[f"power {label}"] = float((possible["made"] & ~possible["false"]).mean()) \
            if len(possible) else np.nan
    return out
