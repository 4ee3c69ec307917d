"""Between the rounds of a sequential study: reading a round's findings, writing the next
round's state, and what the study costs (the decisions: :mod:`modelvar.study.stopping`).

``modelvar sequential next`` (``scripts/run.sh`` calls it after every Snakemake run) reads the
round's findings (``aggregated/study/blocks.parquet``: each block's status), lets
:func:`modelvar.study.stopping.advance` record the stops, stop what the CPU budget cannot pay
for and give every open block ``sequential.step`` more repeats, and writes the state
(``RESULTS/sequential/rounds.json``). It says whether another round is needed: then
``run.sh`` runs Snakemake again, which fits the new repeats only (recorded batches of repeats:
:mod:`modelvar.planning.repeat_batches`).

**Prices** (:func:`price_lines`, in ``modelvar plan``): this round's CPU, the most the study can
take (every block to ``max_repeats``), and, once a round has findings, what the open blocks
are expected to take: each open claim's repeats for 80 % power at its seen difference and
spread, at the bound it faces on the page (the verdicts table's ``needed``), rounded up to a
look, the most of a block's claims, at most ``max_repeats``; before a round has findings, a
prior: the repeats per block the stopping rule takes on simulated comparisons like real
pages' (:func:`modelvar.study.claim_paths.prior_repeats`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from modelvar.study import stopping
from modelvar.study.claim_paths import prior_repeats
from modelvar.study.rounds import ROUNDS_FILE, Rounds, Schedule, block_id, futility_of

#: ``modelvar sequential next``'s exit status when another round is needed
ANOTHER_ROUND = 10


@dataclass(frozen=True)
class Decision:
    """What ``next`` decided: another round or not, and a line per block."""

    another: bool
    lines: list[str]


def _blocks_table(results: Path):
    import pandas as pd

    path = results / "aggregated" / "study" / "blocks.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the round's findings have not run (run "
                                "the workflow first: scripts/run.sh)")
    return pd.read_parquet(path)


def spent_cpu_seconds(results: Path) -> float:
    """The CPU the study's fits have taken so far (the runs tables' ``fit_cpu_seconds``)."""
    import pandas as pd

    folder = results / "aggregated" / "runs"
    if not folder.is_dir():
        return 0.0
    files = sorted(folder.rglob("*.parquet"))
    return float(sum(pd.read_parquet(f, columns=["fit_cpu_seconds"])["fit_cpu_seconds"].sum()
                     for f in files))


def per_repeat_seconds(plan, dataset: str, classifier: str) -> float:
    """A block's estimated CPU seconds per repeat (its fit jobs' estimates over its
    repeats)."""
    clf_plan = plan.datasets[dataset].classifiers[classifier]
    repeats = max(1, plan.repeats_of(dataset, classifier))
    return clf_plan.fit_seconds / repeats


def next_round(plan, config: dict, results: Path) -> Decision:
    """Decide the next round of a sequential study (module docstring) and write its state."""
    schedule: Schedule = plan.schedule
    rounds = (plan.rounds or Rounds.first(schedule, plan.blocks())).with_rule(
        config["sequential"]["decide"], futility_of(config))
    table = _blocks_table(results)
    status = {block_id(r["dataset"], r["classifier"]): r for _, r in table.iterrows()}
    for name, block in rounds.blocks.items():
        row = status.get(name)
        if row is None or int(row["repeats"]) != block.repeats:
            raise ValueError(f"the findings ({results}/aggregated/study/blocks.parquet) are not "
                             f"this round's: {name} has {block.repeats} repeats in the state, "
                             f"{None if row is None else int(row['repeats'])} in the findings; "
                             "run the workflow to finish the round first")
    budget = config["sequential"].get("budget_cpu_hours")

    def cost(opens: list[str]) -> float:
        return sum(per_repeat_seconds(plan, *name.split("|", 1)) * schedule.step
                   for name in opens)

    decided = stopping.advance(
        rounds, {name: str(row["status"]) for name, row in status.items()},
        cost_of_round=cost, budget_seconds=None if budget is None else budget * 3600,
        spent_seconds=spent_cpu_seconds(results) if budget is not None else 0.0)
    write_rounds(results, rounds)
    return Decision(decided.another, decided.lines)


def write_rounds(results: Path, rounds: Rounds) -> None:
    from modelvar.table_files import write_text

    path = Path(results) / ROUNDS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text() != rounds.to_json():
        write_text(rounds.to_json(), path)


def _time(seconds: float) -> str:
    return f"{seconds / 3600:.2f} h" if seconds >= 3600 else f"{seconds / 60:.1f} min"


def _to_look(schedule: Schedule, n: float) -> int:
    """The first planned look at or after ``n`` repeats (the last one beyond it)."""
    return next((k for k in schedule.looks() if k >= n), schedule.max)


def price_lines(plan, config: dict) -> list[str]:
    """The sequential study's prices (module docstring), as lines of ``modelvar plan``."""
    results = Path(config["results_dir"])
    schedule: Schedule = plan.schedule
    looks = schedule.looks()
    now = max_cost = 0.0
    for ds, dataset_plan in plan.datasets.items():
        for clf in dataset_plan.classifiers:
            per = per_repeat_seconds(plan, ds, clf)
            now += per * plan.repeats_of(ds, clf)
            max_cost += per * schedule.max
    out = [f"sequential: looks at {', '.join(map(str, looks))} repeats (split.repeats, "
           f"sequential.step, sequential.max_repeats); round "
           f"{plan.rounds.round if plan.rounds else 1}: fits {_time(now)} of CPU; every "
           f"block to {schedule.max} repeats: {_time(max_cost)}"]
    expected = _expected(plan, results, schedule)
    if expected is not None:
        out.append(f"  expected from round {plan.rounds.round if plan.rounds else 1}'s "
                   f"findings (open claims' repeats for 80 % power): {_time(expected)}")
    else:
        prior = prior_repeats(schedule, futility_of(config))
        out.append(f"  expected before any findings: {_time(max_cost * prior / schedule.max)} "
                   f"(a prior of {prior:.1f} repeats per block: the stopping rule on "
                   "comparisons like real pages', effects of 0 to 1.5 SDs, "
                   "docs/measurements/sequential.md)")
    return out


def _expected(plan, results: Path, schedule: Schedule) -> float | None:
    import pandas as pd

    path = Path(results) / "aggregated" / "study" / "verdicts.parquet"
    if plan.rounds is None or not path.is_file():
        return None
    verdicts = pd.read_parquet(path)
    total = 0.0
    for ds, dataset_plan in plan.datasets.items():
        for clf in dataset_plan.classifiers:
            name = block_id(ds, clf)
            block = plan.rounds.blocks.get(name)
            repeats = plan.repeats_of(ds, clf)
            if block is not None and not block.stopped and "blocks" in verdicts:
                mine = verdicts[[name in list(b) for b in verdicts["blocks"]]
                                & (verdicts["unit"] == "repeats")]
                open_ = mine[~mine["holds"].astype(bool)]["needed"].astype(float)
                if len(open_):
                    need = float(open_.fillna(schedule.max).max())
                    repeats = max(repeats, _to_look(schedule, min(need, schedule.max)))
            total += per_repeat_seconds(plan, ds, clf) * repeats
    return total if math.isfinite(total) else None
