"""Every claim the page states, judged once: the kinds' tables built, their claims listed, each
tier's family decided, and every verdict written back (:mod:`modelvar.findings.kinds`,
:mod:`modelvar.findings.multiplicity`).

The **verdicts table** (``aggregated/study/verdicts.parquet``) has one row per claim with a
test: its kind, tier, table and row there, dataset and classifier, what it is about, a ``key``
naming it whatever row it stands in (the same claim at another look of a sequential study),
the ``blocks`` (dataset|classifier) whose repeats it reads, its ``hypotheses`` with their
``p_values`` and ``adjusted`` p-values, which hypotheses ``held``, the claim's ``p_value``
(the smallest of its hypotheses'), ``p_adjusted`` (the smallest adjusted; the claim holds
where it is at most its tier's level), ``holds``, the bound its p faces (``p_bound``: its
tier's bound at its step where it holds, the next bound where it does not; per hypothesis
``p_bounds``), its ``verdict``, its standardised ``effect`` and ``room`` and, where it does not
hold, the repeats (datasets) that would give 80 % power at that bound (``needed``, in
``unit``). Each claim's own table row gets its tier, verdict, ``p_adjusted``, ``p_bound`` and
``repeats_needed`` (``datasets_needed``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from modelvar.findings import kinds as registry
from modelvar.findings.multiplicity import PROCEDURES, TIERS, decide
from modelvar.findings.paired import NOT_TESTED, claim_repeats

CLAIM_COLUMNS = ["kind", "tier", "table", "row", "dataset", "classifier", "about", "key",
                 "blocks", "hypotheses", "p_values", "p_value", "effect", "room", "margin_sds",
                 "unit"]
DECIDED_COLUMNS = ["adjusted", "p_bounds", "held", "p_adjusted", "holds", "p_bound",
                   "verdict", "needed"]


def build_tables(context: registry.Context) -> dict[str, pd.DataFrame]:
    """Every kind's table (its test), in the registry's order."""
    tables: dict[str, pd.DataFrame] = {}
    for kind in registry.kinds():
        tables[kind.table] = kind.test(context, tables)
    return tables


def _value(row: dict, column: str | None) -> float:
    if not column or column not in row:
        return np.nan
    value = row[column]
    return float(value) if value is not None and pd.notna(value) else np.nan


def stated_claims(tables: dict[str, pd.DataFrame], context: registry.Context) -> pd.DataFrame:
    """One row per claim with a test (module docstring: the verdicts table's first columns):
    every row a kind counts (``rows``) with at least one defined p-value."""
    rows = []
    for kind in registry.kinds():
        table = tables.get(kind.table)
        if table is None or table.empty:
            continue
        tier = kind.tier_of(context)
        counted = kind.rows(table, context)
        for i, row in zip(counted.index, counted.to_dict("records"), strict=True):
            ps = [_value(row, h) for h in kind.hypotheses]
            if not np.isfinite(ps).any():
                continue
            about = kind.about(row)
            dataset, classifier = str(row.get("dataset", "")), str(row.get("classifier", ""))
            rows.append({"kind": kind.name, "tier": tier, "table": kind.table, "row": i,
                         "dataset": dataset, "classifier": classifier, "about": about,
                         "key": "|".join([kind.name, dataset, classifier, about]),
                         "blocks": kind.blocks(row, context), "hypotheses": list(kind.hypotheses),
                         "p_values": ps, "p_value": float(np.nanmin(ps)),
                         "effect": _value(row, kind.effect), "room": _value(row, kind.room),
                         "margin_sds": _value(row, kind.margin), "unit": kind.unit})
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


def decide_claims(claims: pd.DataFrame) -> pd.DataFrame:
    """The claims with each tier's family decided over their hypotheses (module docstring:
    ``adjusted``, ``p_bounds``, ``held``, ``p_adjusted``, ``holds``, ``p_bound``)."""
    out = claims.copy().reset_index(drop=True)
    adjusted = [[np.nan] * len(h) for h in out["hypotheses"]]
    bounds = [[np.nan] * len(h) for h in out["hypotheses"]]
    held: list[list[str]] = [[] for _ in range(len(out))]
    for tier in TIERS:
        owners = [(i, j) for i in np.flatnonzero((out["tier"] == tier).to_numpy())
                  for j in range(len(out.at[i, "hypotheses"]))]
        if not owners:
            continue
        d = decide([out.at[i, "p_values"][j] for i, j in owners], PROCEDURES[tier])
        for (i, j), adj, holds, level in zip(owners, d.adjusted, d.holds, d.level,
                                             strict=True):
            adjusted[i][j], bounds[i][j] = float(adj), float(level)
            if holds:
                held[i].append(out.at[i, "hypotheses"][j])
    out["adjusted"], out["p_bounds"], out["held"] = adjusted, bounds, held
    out["p_adjusted"] = [float(np.nanmin(a)) if np.isfinite(a).any() else np.nan
                         for a in adjusted]
    out["holds"] = [bool(h) for h in held]
    out["p_bound"] = [_claim_bound(a, b, h) for a, b, h in zip(adjusted, bounds, out["holds"],
                                                                 strict=True)]
    return out


def _claim_bound(adjusted: list[float], bounds: list[float], holds: bool) -> float:
    """The bound a claim's p faces: that of its strongest hypothesis (smallest adjusted p)
    where it holds, else the smallest of its hypotheses' (the next bound of its tier)."""
    a, lv = np.asarray(adjusted, float), np.asarray(bounds, float)
    if holds and np.isfinite(a).any():
        return float(lv[int(np.nanargmin(a))])
    return float(np.nanmin(lv)) if np.isfinite(lv).any() else np.nan


def needed_at(effect: float, room: float, level: float, unit: str = registry.REPEATS) -> float:
    """The repeats (datasets) at which a claim of this ``effect`` and ``room`` would have 80 %
    power at ``level`` (:func:`modelvar.findings.paired.claim_repeats`); a statement over
    datasets needs at least :data:`~modelvar.findings.over_datasets.MIN_DATASETS`."""
    from modelvar.findings.over_datasets import MIN_DATASETS

    if not np.isfinite(level):
        return np.nan
    n = claim_repeats(effect, room, level)
    return max(n, MIN_DATASETS) if unit == registry.DATASETS and np.isfinite(n) else n


def write_verdicts(tables: dict[str, pd.DataFrame], claims: pd.DataFrame,
                   context: registry.Context,
                   rows: dict[int, pd.Series] | None = None) -> pd.DataFrame:
    """Every kind's table with its verdicts (module docstring): rows a kind counts but that
    have no test get the verdict of nothing held, rows it does not count ``not tested``, and
    every decided claim (``claims``, :func:`decide_claims`) the verdict of the hypotheses that
    held, judged on its row (``rows``: another row per claim, a sequential study's decisive
    look); then each kind's ``finish``. Returns the claims with ``verdict`` and ``needed``."""
    claims = claims.copy()
    records = {name: dict(zip(t.index, t.to_dict("records"), strict=True))
               for name, t in tables.items() if not t.empty}
    verdicts = []
    needed = []
    for c, claim in claims.iterrows():
        kind = registry.kind(claim["kind"])
        judged_on = rows[c] if rows is not None and c in rows else \
            records[claim["table"]][claim["row"]]
        verdicts.append(kind.verdict(judged_on, frozenset(claim["held"])))
        needed.append(np.nan if claim["holds"] else needed_at(
            claim["effect"], claim["room"], claim["p_bound"], claim["unit"]))
    claims["verdict"], claims["needed"] = verdicts, needed
    for kind in registry.kinds():
        table = tables.get(kind.table)
        if table is None or table.empty:
            continue
        counted = kind.rows(table, context).index
        verdict = pd.Series(NOT_TESTED, index=table.index, dtype=object)
        verdict[counted] = [kind.verdict(records[kind.table][i], frozenset()) for i in counted]
        columns = {"p_adjusted": np.nan, "p_bound": np.nan, kind.needed_column: np.nan}
        values = {name: pd.Series(v, index=table.index, dtype=float)
                  for name, v in columns.items()}
        mine = claims[claims["kind"] == kind.name]
        verdict[mine["row"].to_numpy()] = mine["verdict"].to_numpy()
        for name, column in (("p_adjusted", "p_adjusted"), ("p_bound", "p_bound"),
                             (kind.needed_column, "needed")):
            values[name][mine["row"].to_numpy()] = mine[column].to_numpy(dtype=float)
        kind.write(table, table.index, list(verdict))
        for name, series in values.items():
            table[name] = series
        table["tier"] = kind.tier_of(context)
    for kind in registry.kinds():
        if kind.finish is not None and not tables.get(kind.table, pd.DataFrame()).empty:
            kind.finish(context, tables)
    return claims


@dataclass(frozen=True)
class TierSummary:
    """One tier's family: its procedure and the rate it controls at what level, the claims
    with a test, their hypotheses, and the claims that hold."""

    tier: str
    procedure: str
    rate: str
    level: float
    claims: int
    hypotheses: int
    held: int
    #: the titles of the kinds of its claims, in the registry's order
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class Multiplicity:
    """The page's two promises (:mod:`modelvar.findings.multiplicity`), one summary per tier;
    ``note``: how the p-values were made where it matters (a sequential study's looks)."""

    tiers: tuple[TierSummary, ...]
    note: str = ""

    @classmethod
    def of(cls, claims: pd.DataFrame, note: str = "") -> Multiplicity:
        out = []
        for tier in TIERS:
            mine = claims[claims["tier"] == tier]
            procedure = PROCEDURES[tier]
            present = set(mine["kind"])
            out.append(TierSummary(tier, procedure.name, procedure.rate, procedure.level,
                                   len(mine), int(sum(len(h) for h in mine["hypotheses"])),
                                   int(mine["holds"].astype(bool).sum()),
                                   tuple(k.title for k in registry.kinds()
                                         if k.name in present)))
        return cls(tuple(out), note)

    def tier(self, name: str) -> TierSummary:
        return next(t for t in self.tiers if t.tier == name)

    @property
    def comparisons(self) -> int:
        """The claims with a test, over both tiers."""
        return sum(t.claims for t in self.tiers)

    @property
    def held(self) -> int:
        return sum(t.held for t in self.tiers)


def judge_claims(context: registry.Context) -> tuple[dict[str, pd.DataFrame], Multiplicity]:
    """Every kind's table with its verdicts and the ``verdicts`` table (module docstring)."""
    tables = build_tables(context)
    claims = decide_claims(stated_claims(tables, context))
    claims = write_verdicts(tables, claims, context)
    tables["verdicts"] = claims
    return tables, Multiplicity.of(claims)
