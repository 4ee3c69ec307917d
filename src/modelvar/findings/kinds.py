"""The kinds of claim the Findings page states, each declared once: the registry that the page
(:mod:`modelvar.findings.study`), a sequential study (:mod:`modelvar.findings.sequential`) and
the calibration (:mod:`modelvar.calibration`) read.

A **kind** (:class:`ClaimKind`) says everything about one kind of claim:

* its **test**: the function that builds its table (aggregated/study/``table``.parquet) from
  the study's tables (:class:`Context`) and the tables of the kinds registered before it, each
  row a candidate claim with its p-values;
* its **hypotheses**: the p-value columns of its elementary nulls (a comparison's "no
  difference" and "a ratio beyond the margin"; a leader's "not first" and "not about equal to
  the runner-up"), each entering its tier's family (:mod:`modelvar.findings.multiplicity`);
* its **verdict** from the hypotheses that hold (a verdict names the null it rejects: a false
  verdict is a rejected true null, which the tier's procedure bounds), and how its table
  takes the verdicts of all its rows (``write``);
* its **tier**: ``headline`` (family-wise control) or ``exploratory`` (false-discovery-rate
  control); a function of the study where it depends on it (per-dataset classifier comparisons
  are exploratory beside a statement over datasets);
* its **sentence** (``says``): the claim in one plain sentence, with its verdict, that stands
  on its own (the page's list of every claim);
* its **calibration**: how one of its claims is scored against a simulated truth (``score``:
  whether a true claim was possible, whether the stated one is false) and the scenario of
  :data:`modelvar.calibration.pages.SCENARIOS` in which its power is measured;
* for a sequential study: whether it is made ``once`` over every block's repeats at its stop
  (statements over datasets) and whether it is a ``leading`` claim (``sequential.decide:
  leaders``); the unit its power is in (repeats, datasets).

Adding a kind is one :func:`register` call (tests/test_claim_kinds.py registers one and follows
it through the page, the calibration and a sequential study); an undeclared kind is an error
everywhere (:func:`kind`), never skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from modelvar.findings.multiplicity import EXPLORATORY, HEADLINE, TIERS
from modelvar.findings.paired import (
    ALPHA,
    CONTRADICTED,
    EQUIVALENT,
    IDENTICAL,
    INCONCLUSIVE,
    NOT_TESTED,
    SUPPORTED,
    PerRepeat,
)
from modelvar.findings.truth import Truth

#: the units a kind's power is counted in
REPEATS, DATASETS = "repeats", "datasets"
#: one row of a kind's table, as the kind's functions read it (a dict or a pandas Series)
Row = Mapping


#: the part of a study's design a drawn kind's table needs (:mod:`modelvar.study.design`):
#: the sources alone, the factorial grid, or both (all combined is a factorial cell)
PARTS = ("one-at-a-time", "factorial", "both")


@dataclass(frozen=True)
class Drawing:
    """How a kind's claims are drawn (:mod:`modelvar.plots.verdicts`, the figure
    ``findings/verdicts_<kind>``): a panel per value of ``panel``, a row per value of ``row``,
    and each row of the kind's table one mark — its ``estimate`` with its 95 % interval
    (``low``, ``high``), classifier by colour and marker, datasets in a fixed order — against
    a ``reference`` line (the estimate of no effect; none where None). ``band``: where the
    table row's estimate is practically equivalent to the reference (its ``low``, ``high`` in
    the estimate's units), a grey band behind its mark. ``every_row``: every row of the table,
    not only those the kind claims about (the variance shares: each component's share with
    its interval, the claim is about the largest). ``part``: the part of the design its table
    needs (:data:`PARTS`); a kind in datasets (``unit``) is drawn only where the page states
    claims over datasets."""

    estimate: str
    low: str
    high: str
    panel: str
    row: str
    axis: str
    part: str
    #: what its interval is ("95 % interval over repeats"), for the figure's key and caption
    interval: str = "95 % interval over repeats"
    reference: float | None = 0.0
    band: Callable[[Row], tuple[float, float]] | None = None
    every_row: bool = False

    def __post_init__(self) -> None:
        if self.part not in PARTS:
            raise ValueError(f"drawing: part {self.part!r} is none of {PARTS}")


@dataclass
class Context:
    """What every kind's test reads: the sources table, the summary's full-test-set rows and
    their per-repeat values, the variance components per dataset × classifier, the weak-level
    threshold and the equivalence margin; ``memo`` keeps what a kind's test works out for its
    ``finish`` (the seed claims' evidence)."""

    sources: pd.DataFrame
    summary: pd.DataFrame
    values: PerRepeat
    components: pd.DataFrame
    weak_below: float
    margin: float
    memo: dict = field(default_factory=dict)

    @property
    def datasets(self) -> int:
        return int(self.sources["dataset"].nunique()) if not self.sources.empty else 0


def _write_verdict(table: pd.DataFrame, index: pd.Index, verdicts: list[str]) -> None:
    table["verdict"] = pd.Series(verdicts, index=index, dtype=object)


@dataclass(frozen=True, eq=False)
class ClaimKind:
    """One kind of claim (module docstring)."""

    name: str
    #: what the page calls its claims in a list ("leading sources")
    title: str
    table: str
    test: Callable[[Context, dict[str, pd.DataFrame]], pd.DataFrame]
    hypotheses: tuple[str, ...]
    verdict: Callable[[Row, frozenset[str]], str]
    about: Callable[[Row], str]
    says: Callable[[Row, str, float], str]
    score: Callable[[Row, str, Truth, dict[str, pd.DataFrame]], tuple[bool, bool]]
    scenario: str
    tier: str | Callable[[Context], str] = HEADLINE
    blocks: Callable[[Row, Context], list[str]] = lambda row, ctx: [
        f"{row['dataset']}|{row['classifier']}"]
    rows: Callable[[pd.DataFrame, Context], pd.DataFrame] = lambda table, ctx: table
    write: Callable[[pd.DataFrame, pd.Index, list[str]], None] = _write_verdict
    finish: Callable[[Context, dict[str, pd.DataFrame]], None] | None = None
    effect: str = "effect"
    room: str | None = "room"
    #: the column of its equivalence margin in SDs (a sequential study's effect of interest)
    margin: str | None = "margin_sds"
    unit: str = REPEATS
    once: bool = False
    #: a block of a sequential study waits for it under ``sequential.decide: leaders``: a
    #: claim a planted effect decides within a few looks (the leading sources); a variance
    #: share's lead, tested over few clusters, held back every block to its last look
    leading: bool = False
    #: how its claims are drawn (a figure of the Findings page); None: stated, not drawn
    drawn: Drawing | None = None

    def tier_of(self, context: Context) -> str:
        tier = self.tier(context) if callable(self.tier) else self.tier
        if tier not in TIERS:
            raise ValueError(f"claim kind {self.name!r}: tier {tier!r} is none of {TIERS}")
        return tier

    @property
    def figure(self) -> str:
        """The name of its figure's files (``findings/<figure>.<format>``) where it is drawn."""
        return "verdicts_" + self.name.replace(" ", "_")

    @property
    def needed_column(self) -> str:
        """The column of its table that says how many repeats (datasets) would decide it."""
        return f"{self.unit}_needed"


_REGISTRY: dict[str, ClaimKind] = {}


def register(new: ClaimKind) -> ClaimKind:
    """Add a kind (its test runs after every kind registered before it, whose tables it may
    read). Its name must be new, its hypotheses at least one column."""
    if new.name in _REGISTRY:
        raise ValueError(f"claim kind {new.name!r} is already registered")
    if not new.hypotheses:
        raise ValueError(f"claim kind {new.name!r} names no hypothesis (p-value column)")
    if new.unit not in (REPEATS, DATASETS):
        raise ValueError(f"claim kind {new.name!r}: unit {new.unit!r} is not "
                         f"{REPEATS!r} or {DATASETS!r}")
    _REGISTRY[new.name] = new
    return new


def unregister(name: str) -> None:
    """Remove a kind (a test's own); a built-in stays."""
    if name in BUILT_IN_NAMES:
        raise ValueError(f"claim kind {name!r} is built in")
    _REGISTRY.pop(name, None)


def kinds() -> tuple[ClaimKind, ...]:
    """Every registered kind, in registration order."""
    return tuple(_REGISTRY.values())


def kind(name: str) -> ClaimKind:
    """The kind called ``name``; an undeclared kind is an error (never skipped)."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"claim kind {name!r} is not declared (modelvar.findings.kinds: "
                         f"{', '.join(_REGISTRY)})") from None


def holds(held: frozenset[str], hypothesis: str) -> bool:
    return hypothesis in held


# ------------------------------------------------------------------ verdicts and sentences
def compared_verdict(row: Row, held: frozenset[str]) -> str:
    """A comparison of two positive measures (:class:`~modelvar.findings.paired.Compared`):
    ``equivalent`` where its equivalence null is rejected, else told apart by the sign of
    the difference where its difference null is, ``identical`` for identical values, else
    ``inconclusive``."""
    if bool(row.get("identical", False)):
        return IDENTICAL
    if "p_equivalent" in held:
        return EQUIVALENT
    if "p_difference" in held:
        return SUPPORTED if row["difference"] > 0 else CONTRADICTED
    return INCONCLUSIVE


def _leader_verdict(row: Row, held: frozenset[str]) -> str:
    if "p_equivalent" in held:
        return EQUIVALENT
    if "p_lead" in held and bool(row["ahead"]):
        return SUPPORTED
    return INCONCLUSIVE


def _over_verdict(row: Row, held: frozenset[str]) -> str:
    if bool(row.get("identical", False)):
        return IDENTICAL
    if not np.isfinite(row["p_value"]):
        return NOT_TESTED
    if "p_value" in held:
        return SUPPORTED if row["difference"] > 0 else CONTRADICTED
    return INCONCLUSIVE


def _share_verdict(row: Row, held: frozenset[str]) -> str:
    return SUPPORTED if "lead_p" in held else INCONCLUSIVE


def _write_lead_held(table: pd.DataFrame, index: pd.Index, verdicts: list[str]) -> None:
    table["lead_held"] = pd.Series([v == SUPPORTED for v in verdicts], index=index, dtype=bool)


def _seed_verdict(row: Row, held: frozenset[str]) -> str:
    if "p_supported" in held:
        return SUPPORTED
    if "p_contradicted" in held:
        return CONTRADICTED
    return row["status"] if row["status"] == NOT_TESTED else INCONCLUSIVE


def _write_status(table: pd.DataFrame, index: pd.Index, verdicts: list[str]) -> None:
    table["status"] = pd.Series(verdicts, index=index, dtype=object)


def not_apart_from(row: Row, level: float) -> list[str]:
    """The other sources a leading source is not told apart from at ``level`` (its comparison
    with each: p above the level the claim faces)."""
    others, ps = list(row.get("others", []) or []), list(row.get("p_others", []) or [])
    return [o for o, p in zip(others, ps, strict=False) if not (np.isfinite(p) and p <= level)]


MEASURE_WORDS = {"accuracy_sd": "accuracy varied", "disagreement": "predictions changed"}


def _names(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _leader_says(row: Row, verdict: str, level: float) -> str:
    what = MEASURE_WORDS[row["measure"]]
    where = f"On {row['dataset']}, {row['classifier']}'s {what}"
    if verdict == SUPPORTED:
        return f"{where} most under {row['leader']}: told apart from every other source."
    if verdict == EQUIVALENT:
        return (f"{where} about equally under {row['leader']} and {row['runner_up']} (within "
                "the equivalence margin).")
    rivals = not_apart_from(row, level) or [row["runner_up"]]
    return (f"{where} most under {row['leader']} by its estimate, not told apart from "
            f"{_names(rivals)}: no source ranked first.")


def _compared_says(row: Row, verdict: str, level: float) -> str:
    a, b = row["classifier_a"], row["classifier_b"]
    what = "predictions changed" if row["measure"] == "disagreement" else "accuracy varied"
    under = str(row["level"]).split(":")[0]
    where = f"On {row['dataset']}, under {under}"
    if verdict in (SUPPORTED, CONTRADICTED):
        more, less = (a, b) if verdict == SUPPORTED else (b, a)
        return f"{where}, {less}'s {what} less than {more}'s: told apart."
    if verdict == EQUIVALENT:
        return f"{where}, {a}'s and {b}'s {what} about equally (within the equivalence margin)."
    if verdict == IDENTICAL:
        return f"{where}, {a}'s and {b}'s {what} identically."
    return f"{where}, {a}'s and {b}'s {what}: not told apart, nor shown about equal."


def _combined_says(row: Row, verdict: str, level: float) -> str:
    where = f"On {row['dataset']}, {row['classifier']}'s disagreement under {row['level']} alone"
    return where + {SUPPORTED: " was more than with all sources combined: told apart.",
                    CONTRADICTED: " was less than with all sources combined: told apart.",
                    EQUIVALENT: " was about as much as with all sources combined.",
                    IDENTICAL: " was the same as with all sources combined."}.get(
        verdict, ": not told apart from all sources combined, nor shown about equal.")


def _seed_says(row: Row, verdict: str, level: float) -> str:
    return (f"On {row['dataset']}, for {row['classifier']}, seed 004's claim "
            f"\u201c{row['statement']}\u201d: {verdict}.")


def _share_says(row: Row, verdict: str, level: float) -> str:
    what = "run accuracy" if row["response"] == "accuracy" else "per-repeat agreement"
    where = f"On {row['dataset']}, over the factorial grid, {row['classifier']}'s {what}"
    if verdict == SUPPORTED:
        return f"{where}: {row['component']} has the largest variance share, told apart."
    return (f"{where}: {row['component']} has the largest share by its estimate, not told "
            f"apart from every other factor.")


def _study_compared_says(row: Row, verdict: str, level: float) -> str:
    a, b = row["classifier_a"], row["classifier_b"]
    what = "predictions changed" if row["measure"] == "disagreement" else "accuracy varied"
    under = str(row["level"]).split(":")[0]
    where = f"Over the {row['datasets']} datasets, under {under}"
    if verdict in (SUPPORTED, CONTRADICTED):
        more, less = (a, b) if verdict == SUPPORTED else (b, a)
        return f"{where}, {less}'s {what} less than {more}'s: told apart."
    return f"{where}, {a}'s and {b}'s {what}: not told apart."


def _study_leader_says(row: Row, verdict: str, level: float) -> str:
    what = MEASURE_WORDS[row["measure"]]
    where = f"Over the {row['datasets']} datasets, {row['classifier']}'s {what}"
    if verdict == SUPPORTED:
        return f"{where} most under {row['leader']}: told apart from every other source."
    return (f"{where} most under {row['leader']} by its mean, not told apart from every "
            "other source.")


def _study_share_says(row: Row, verdict: str, level: float) -> str:
    what = "run accuracy" if row["response"] == "accuracy" else "per-repeat agreement"
    where = f"Over the {int(row['lead_datasets'])} datasets, {row['classifier']}'s {what}"
    if verdict == SUPPORTED:
        return f"{where}: {row['component']} has the largest variance share, told apart."
    return f"{where}: {row['component']} has the largest mean share, not told apart."


# ------------------------------------------------------------------ calibration scores
def _strictly_first(values: dict[str, float], named: str, tolerance: float = 1e-12) -> bool:
    top = values[named]
    return all(top > v + tolerance for k, v in values.items() if k != named)


def _within(ratio: float, margin: float) -> bool:
    return 1 / margin <= ratio <= margin


def _alone_cells(sources: pd.DataFrame, dataset=None, classifier=None) -> dict[str, str]:
    """Level → cell of every source alone (of one dataset × classifier, where given)."""
    part = sources[~sources["source"].isin(["control", "all combined", "test set"])]
    if dataset is not None:
        part = part[part["dataset"] == dataset]
    if classifier is not None:
        part = part[part["classifier"] == classifier]
    return dict(zip(part["level"], part["cell"], strict=False))


def _score_leader(row, verdict, truth: Truth, tables) -> tuple[bool, bool]:
    key = (row["dataset"], row["classifier"])
    values = {level: truth.of(row["measure"])[(*key, cell)]
              for level, cell in _alone_cells(tables["sources"], *key).items()}
    possible = _strictly_first(values, row["leader"])
    if verdict == SUPPORTED:
        return possible, not possible
    if verdict == EQUIVALENT:
        runner = values[row["runner_up"]]
        return possible, not (runner > 0 and _within(values[row["leader"]] / runner,
                                                      truth.margin))
    return possible, False


def _score_pair(a: float, b: float, verdict: str, margin: float) -> tuple[bool, bool]:
    possible = a != b
    if verdict == EQUIVALENT:
        return possible, not (b > 0 and _within(a / b, margin))
    if verdict == SUPPORTED:
        return possible, not a > b
    if verdict == CONTRADICTED:
        return possible, not a < b
    return possible, False


def _score_compared(row, verdict, truth: Truth, tables) -> tuple[bool, bool]:
    table = truth.of(row["measure"])
    return _score_pair(table[(row["dataset"], row["classifier_a"], row["cell_a"])],
                       table[(row["dataset"], row["classifier_b"], row["cell_b"])], verdict,
                       truth.margin)


def _alone_or_any(sources: pd.DataFrame, dataset, level) -> str:
    return sources[(sources["dataset"] == dataset) & (sources["level"] == level)]["cell"].iloc[0]


def _score_combined(row, verdict, truth: Truth, tables) -> tuple[bool, bool]:
    key = (row["dataset"], row["classifier"])
    return _score_pair(truth.disagreement[(*key, row["cell"])],
                       truth.disagreement[(*key, row["combined_cell"])], verdict,
                       truth.margin)


def _score_share(row, verdict, truth: Truth, tables) -> tuple[bool, bool]:
    comps = truth.components[(row["dataset"], row["classifier"], row["response"])]
    possible = _strictly_first(comps, max(comps, key=comps.get))
    return possible, verdict == SUPPORTED and not _strictly_first(comps, row["component"])


def _score_seed(row, verdict, truth: Truth, tables) -> tuple[bool, bool]:
    if row["claim"] != "downsampling_largest":
        raise ValueError(f"the calibration has no truth for seed 004's claim {row['claim']!r}")
    key = (row["dataset"], row["classifier"])
    cells = _alone_cells(tables["sources"], *key)
    sources = tables["sources"]
    mine = sources[(sources["dataset"] == key[0]) & (sources["classifier"] == key[1])]
    down = mine[mine["source"] == "downsample"]["cell"].iloc[0]
    others = [c for c in cells.values() if c != down]
    true = all(t[(*key, down)] > t[(*key, c)] for t in (truth.spread, truth.disagreement)
               for c in others)
    return true, (verdict == SUPPORTED and not true) or (verdict == CONTRADICTED and true)


def _score_study_compared(row, verdict, truth: Truth, tables) -> tuple[bool, bool]:
    cells = _alone_cells(tables["sources"])
    cell = cells.get(row["level"]) or _alone_or_any(
        tables["sources"], tables["sources"]["dataset"].iloc[0], row["level"])
    table = truth.of(row["measure"], population=True)
    return _score_pair(table[(row["classifier_a"], cell)], table[(row["classifier_b"], cell)],
                       verdict, truth.margin)


def _score_study_leader(row, verdict, truth: Truth, tables) -> tuple[bool, bool]:
    table = truth.of(row["measure"], population=True)
    values = {level: table[(row["classifier"], cell)]
              for level, cell in _alone_cells(tables["sources"]).items()}
    possible = _strictly_first(values, row["leader"])
    return possible, verdict == SUPPORTED and not possible


def _score_study_share(row, verdict, truth: Truth, tables) -> tuple[bool, bool]:
    comps = truth.population_components[(row["classifier"], row["response"])]
    possible = _strictly_first(comps, max(comps, key=comps.get))
    return possible, verdict == SUPPORTED and not _strictly_first(comps, row["component"])


# ------------------------------------------------------------------ the built-in kinds
def _pair_blocks(row, ctx: Context) -> list[str]:
    return [f"{row['dataset']}|{row[c]}" for c in ("classifier_a", "classifier_b")]


def _every_dataset(*classifiers: str) -> Callable[[Row, Context], list[str]]:
    def blocks(row, ctx: Context) -> list[str]:
        datasets = sorted(set(ctx.sources["dataset"]))
        return [f"{d}|{row[c]}" for d in datasets for c in classifiers]
    return blocks


def _leader_test(ctx: Context, tables) -> pd.DataFrame:
    from modelvar.findings.comparison import leader_margins

    return leader_margins(ctx.sources, ctx.summary, ALPHA, ctx.margin, values=ctx.values)


def _share_test(ctx: Context, tables) -> pd.DataFrame:
    components = ctx.components.copy()
    if not components.empty:
        components["lead_held"] = False
    return components


def _leaders_only(table: pd.DataFrame, ctx: Context) -> pd.DataFrame:
    return table[table["lead_against"] > 0] if not table.empty else table


def _comparison_test(ctx: Context, tables) -> pd.DataFrame:
    from modelvar.findings.comparison import classifier_comparison

    return classifier_comparison(ctx.sources, ctx.summary, ALPHA, ctx.margin,
                                 values=ctx.values)


def _not_control(table: pd.DataFrame, ctx: Context) -> pd.DataFrame:
    return table[~table["source"].isin(["control", "test set"])]


def _per_dataset_tier(ctx: Context) -> str:
    from modelvar.findings.over_datasets import MIN_DATASETS

    return HEADLINE if ctx.datasets < MIN_DATASETS else EXPLORATORY


def _study_comparison_test(ctx: Context, tables) -> pd.DataFrame:
    from modelvar.findings.over_datasets import study_comparison

    return study_comparison(tables["comparison"])


def _study_leaders_test(ctx: Context, tables) -> pd.DataFrame:
    from modelvar.findings.over_datasets import study_leaders

    return study_leaders(ctx.sources)


def _study_shares_test(ctx: Context, tables) -> pd.DataFrame:
    from modelvar.findings.components import study_components
    from modelvar.findings.over_datasets import study_shares

    if ctx.components.empty:
        return pd.DataFrame()
    return study_shares(ctx.components, study_components(ctx.components))


def _combined_test(ctx: Context, tables) -> pd.DataFrame:
    from modelvar.findings.sources import single_against_combined

    return single_against_combined(ctx.sources, ctx.summary, ALPHA, ctx.margin,
                                   values=ctx.values)


def _seed_test(ctx: Context, tables) -> pd.DataFrame:
    from modelvar.findings.claims import claims_at, gather_claims

    gathered = gather_claims(ctx.sources, ctx.summary, weak_below=ctx.weak_below,
                             margins=tables["margins"], values=ctx.values)
    ctx.memo["seed claim"] = gathered
    return claims_at(gathered, ALPHA, tables["margins"], text=False)


def _counted_seed_claims(table: pd.DataFrame, ctx: Context) -> pd.DataFrame:
    return table[~table["restates"].astype(bool)]


def _seed_finish(ctx: Context, tables: dict[str, pd.DataFrame]) -> None:
    """Seed 004's claims after the verdicts: a restating claim takes the leading sources'
    verdicts; every claim's evidence is written at the level it faced."""
    from modelvar.findings.claims import evidence_text

    claims, margins = tables["claims"], tables["margins"]
    for i, (dataset, classifier, _, evidence) in enumerate(ctx.memo["seed claim"]):
        index = claims.index[i]
        if evidence.restates:
            mine = margins[(margins["dataset"] == dataset)
                           & (margins["classifier"] == classifier)]
            claims.loc[index, "status"] = SUPPORTED if len(mine) and \
                (mine["verdict"] == SUPPORTED).all() else INCONCLUSIVE
        bound = claims.loc[index, "p_bound"] if "p_bound" in claims else np.nan
        claims.loc[index, "evidence"] = evidence_text(evidence, claims.loc[index, "status"],
                                                      float(bound))


def _equivalent_to_combined(row: Row) -> tuple[float, float]:
    """alone − combined where alone ÷ combined is within the margin m: [c/m − c, c·m − c]."""
    m, c = float(row["equivalence_ratio"]), float(row["combined"])
    return c / m - c, c * m - c


_LEADER_DRAWN = Drawing("margin", "margin_low", "margin_high", panel="measure", row="leader",
                        axis="leader − runner-up", part="one-at-a-time")
_SHARES_DRAWN = Drawing("share", "share_low", "share_high", panel="response", row="component",
                        axis="share of the variance", part="factorial", reference=None,
                        every_row=True, interval="95 % jackknife interval over repeats")


BUILT_IN: tuple[ClaimKind, ...] = (
    ClaimKind(
        "leader", title="leading sources", table="margins", test=_leader_test,
        hypotheses=("p_lead", "p_equivalent"), verdict=_leader_verdict,
        about=lambda r: f"{r['measure']}: {r['leader']}", says=_leader_says,
        score=_score_leader, scenario="planted", leading=True, drawn=_LEADER_DRAWN),
    ClaimKind(
        "largest share", title="largest variance shares", table="components",
        test=_share_test, hypotheses=("lead_p",), verdict=_share_verdict,
        about=lambda r: f"{r['response']}: {r['component']}", says=_share_says,
        score=_score_share, scenario="planted", rows=_leaders_only, write=_write_lead_held,
        effect="lead_effect", room=None, drawn=_SHARES_DRAWN),
    ClaimKind(
        "classifiers", title="classifiers compared per dataset", table="comparison",
        test=_comparison_test, hypotheses=("p_difference", "p_equivalent"),
        verdict=compared_verdict,
        about=lambda r: f"{r['measure']} {r['level']}: {r['classifier_a']} − {r['classifier_b']}",
        says=_compared_says, score=_score_compared, scenario="planted", tier=_per_dataset_tier,
        blocks=_pair_blocks, rows=_not_control),
    ClaimKind(
        "classifiers over datasets", title="classifiers compared over datasets",
        table="study_comparison", test=_study_comparison_test, hypotheses=("p_value",),
        verdict=_over_verdict,
        about=lambda r: f"{r['measure']} {r['level']}: {r['classifier_a']} − {r['classifier_b']}",
        says=_study_compared_says, score=_score_study_compared, scenario="over datasets",
        blocks=_every_dataset("classifier_a", "classifier_b"), rows=_not_control, room=None,
        unit=DATASETS, once=True),
    ClaimKind(
        "leader over datasets", title="leading sources over datasets", table="study_leaders",
        test=_study_leaders_test, hypotheses=("p_lead",), verdict=_leader_verdict,
        about=lambda r: f"{r['measure']}: {r['leader']}", says=_study_leader_says,
        score=_score_study_leader, scenario="over datasets",
        blocks=_every_dataset("classifier"), room=None, unit=DATASETS, once=True,
        drawn=replace(_LEADER_DRAWN, interval="95 % interval over datasets")),
    ClaimKind(
        "largest share over datasets", title="largest variance shares over datasets",
        table="study_components", test=_study_shares_test, hypotheses=("lead_p",),
        verdict=_share_verdict, about=lambda r: f"{r['response']}: {r['component']}",
        says=_study_share_says, score=_score_study_share, scenario="over datasets",
        blocks=_every_dataset("classifier"), rows=_leaders_only, write=_write_lead_held,
        effect="lead_effect", room=None, unit=DATASETS, once=True,
        drawn=replace(_SHARES_DRAWN, interval="95 % interval over datasets")),
    ClaimKind(
        "combined", title="each source against all combined", table="combined",
        test=_combined_test, hypotheses=("p_difference", "p_equivalent"),
        verdict=compared_verdict, about=lambda r: f"{r['level']} against all combined",
        says=_combined_says, score=_score_combined, scenario="tie", tier=EXPLORATORY,
        drawn=Drawing("difference", "difference_low", "difference_high", panel="measure",
                      row="level", axis="alone − all combined", part="both",
                      band=_equivalent_to_combined)),
    ClaimKind(
        "seed claim", title="seed 004's claims", table="claims", test=_seed_test,
        hypotheses=("p_supported", "p_contradicted"), verdict=_seed_verdict,
        about=lambda r: r["claim"], says=_seed_says, score=_score_seed, scenario="planted",
        tier=EXPLORATORY, rows=_counted_seed_claims, write=_write_status, finish=_seed_finish,
        room=None),
)
BUILT_IN_NAMES = tuple(k.name for k in BUILT_IN)
for _kind in BUILT_IN:
    register(_kind)
