"""Between the rounds of a sequential study: which blocks get more repeats, and what the study
costs (:mod:`modelvar.study.rounds`, :mod:`modelvar.findings.sequential`).

``modelvar sequential next`` (``scripts/run.sh`` calls it after every Snakemake run) reads the
round's findings (``aggregated/study/blocks.parquet``: each block's status), gives every open
block ``sequential.step`` more repeats, stops those the CPU budget cannot pay for, and writes
the state (``RESULTS/sequential/rounds.json``). It says whether another round is needed: then
``run.sh`` runs Snakemake again, which fits the new repeats only (one job per repeat). A block
that stops keeps why in the state, whatever later rounds of other blocks find.

**Prices** (:func:`price_lines`, in ``modelvar plan``): this round's CPU, the most the study can
take (every block to ``max_repeats``), and, once a round has findings, what the open blocks
are expected to take: each open claim's repeats for 80 % power at its seen difference and
spread, at the bound it faces on the page (the verdicts table's ``needed``), rounded up to a
look, the most of a block's claims, at most
``max_repeats``; before a round has findings, a prior: the repeats per block the stopping rule
takes on simulated comparisons (:func:`modelvar.calibration.sequential.prior_repeats`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from modelvar.study.rounds import (
    OVER_BUDGET,
    ROUNDS_FILE,
    Rounds,
    Schedule,
    block_id,
)

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
    blocks = [(ds, clf) for ds, dp in plan.datasets.items() for clf in dp.classifiers]
    rounds = plan.rounds or Rounds.first(schedule, blocks)
    if rounds.schedule is None:  # a state written before schedules were recorded
        rounds.schedule = (schedule.start, schedule.step, schedule.max)
    table = _blocks_table(results)
    status = {block_id(r["dataset"], r["classifier"]): r for _, r in table.iterrows()}
    for name, block in rounds.blocks.items():
        row = status.get(name)
        if row is None or int(row["repeats"]) != block.repeats:
            raise ValueError(f"the findings ({results}/aggregated/study/blocks.parquet) are not "
                             f"this round's: {name} has {block.repeats} repeats in the state, "
                             f"{None if row is None else int(row['repeats'])} in the findings; "
                             "run the workflow to finish the round first")
    for name, block in rounds.blocks.items():
        if not block.stopped and status[name]["status"] != "open":
            block.stopped = str(status[name]["status"])  # why, recorded once
    opens = [name for name, block in rounds.blocks.items() if not block.stopped]
    lines = [f"{name.replace('|', ', ')}: {block.repeats} repeats, "
             f"{block.stopped or 'open'}" for name, block in rounds.blocks.items()]
    if not opens:
        write_rounds(results, rounds)
        return Decision(False, [f"round {rounds.round}: every block has stopped", *lines])
    budget = config["sequential"].get("budget_cpu_hours")
    if budget is not None:
        cost = sum(per_repeat_seconds(plan, *name.split("|", 1)) * schedule.step
                   for name in opens)
        spent = spent_cpu_seconds(results)
        if spent + cost > budget * 3600:
            for name in opens:
                rounds.blocks[name].stopped = OVER_BUDGET
            write_rounds(results, rounds)
            return Decision(True, [f"round {rounds.round}: the next round's ≈ "
                                   f"{cost / 3600:.2f} CPU h would take the study's "
                                   f"{spent / 3600:.2f} h past the budget of {budget:g} h: "
                                   f"{len(opens)} open block(s) stop", *lines])
    for name in opens:
        block = rounds.blocks[name]
        block.repeats = schedule.next(block.repeats)
        block.looks.append(block.repeats)
    rounds.round += 1
    write_rounds(results, rounds)
    return Decision(True, [f"round {rounds.round}: {len(opens)} of {len(rounds.blocks)} "
                           f"block(s) get {schedule.step} more repeats", *lines])


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


def price_lines(plan, results: Path) -> list[str]:
    """The sequential study's prices (module docstring), as lines of ``modelvar plan``."""
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
        from modelvar.calibration.sequential import prior_repeats

        prior = prior_repeats(schedule)
        out.append(f"  expected before any findings: {_time(max_cost * prior / schedule.max)} "
                   f"(a prior of {prior:.1f} repeats per block: the stopping rule on a mix "
                   "of strong, moderate and tied comparisons like a 10-repeat study's, "
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
