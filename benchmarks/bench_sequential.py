"""Sequential studies calibrated (issue 56): false claims under optional stopping, power and
repeats against the fixed design of equal power.

Two parts, simulations with a known truth (:mod:`modelvar.calibration.pages`):

1. **Claim level**, ``--claims`` pages per mix: per block three paired comparisons whose
   per-repeat differences are N(δ, 1), δ by the block's type (very strong 5 SD, strong 3,
   moderate 1, weak 0.6, tie 0: an equivalence to find at a margin of 0.5 SD), judged with
   sequential p-values under Benjamini–Yekutieli and stopped per block by the study's rule
   (:func:`~modelvar.calibration.sequential.sequential_claims`), at the schedules of
   :data:`SCHEDULES`. The same comparisons judged at every fixed number of repeats from 3 to
   30 (:func:`~modelvar.calibration.sequential.fixed_claims`) give the **fixed design of equal
   power**: the fewest repeats whose power is at least the sequential study's on every type
   with an effect (ties are equivalence claims, reported beside it). The ratio is the
   sequential study's mean repeats per block over that design's.
2. **Pages**, ``--pages`` per scenario: the verdicts issue's simulated pages (2 datasets × 2
   classifiers, the default design) run round after round by the Findings' own code
   (:func:`~modelvar.calibration.sequential.run_sequential_pages`, looks at 3, 6, 9 repeats),
   every stated claim of the last round scored: the false-claim rates where nothing acts and
   where the top sources tie, with optional stopping at every look.

Usage: ``make bench-sequential`` (``python benchmarks/bench_sequential.py [--claims N]
[--pages N] [--write]``; ``--write`` puts the tables into docs/measurements/sequential.md).
Every draw comes from named seeds, so a rerun prints the same numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

from modelvar.calibration.sequential import PRIOR_MIX

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_verdicts import markdown

DOC = Path(__file__).resolve().parents[1] / "docs" / "measurements" / "sequential.md"
#: block mixes (blocks of each type): the one like the issue's 10-repeat study (the plan's prior,
#: modelvar.calibration.sequential.PRIOR_MIX), a balanced one, and one where nothing acts
MIXES = {
    "like the issue's study": PRIOR_MIX,
    "balanced": {"strong": 4, "weak": 1, "tie": 1},
    "nothing acts": {"tie": 20},
}
#: (first look, step, last look)
SCHEDULES = ((3, 3, 30), (5, 5, 30), (3, 2, 30))
FIXED = tuple(range(3, 31))
PAGE_SCENARIOS = ("null", "tie", "planted")
PAGE_SCHEDULE = (3, 3, 9)


def _blocks(mix: str) -> list[str]:
    return [kind for kind, n in MIXES[mix].items() for _ in range(n)]


def _sequential(task):
    from modelvar.calibration.sequential import sequential_claims
    from modelvar.study.rounds import Schedule

    mix, schedule, pages = task
    start = time.process_time()
    out = sequential_claims(_blocks(mix), schedule=Schedule(*schedule), pages=pages,
                            seed=56 + list(MIXES).index(mix))
    return mix, schedule, out, time.process_time() - start


def _fixed(task):
    from modelvar.calibration.sequential import fixed_claims

    mix, repeats, pages = task
    return mix, repeats, fixed_claims(_blocks(mix), repeats=repeats, pages=pages,
                                      seed=560 + list(MIXES).index(mix))


def _pages(task):
    from modelvar.calibration.sequential import run_sequential_pages
    from modelvar.study.rounds import Schedule

    name, pages, seed = task
    start = time.process_time()
    scored = run_sequential_pages(name, pages=pages, schedule=Schedule(*PAGE_SCHEDULE),
                                  seed=seed)
    scored["page"] += seed * 1_000_000
    return name, scored, time.process_time() - start


def equal_power(sequential: dict, fixed: dict[int, dict]) -> int | None:
    """The fewest fixed repeats whose power is at least the sequential study's on every type
    with an effect (None: not within 30)."""
    kinds = [k for k in sequential if k.startswith("power ") and k != "power tie"]
    for repeats in sorted(fixed):
        if all(fixed[repeats][k] >= sequential[k] for k in kinds):
            return repeats
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, default=4000,
                        help="claim-level pages per mix and design (default 4,000)")
    parser.add_argument("--pages", type=int, default=100,
                        help="pages per scenario run by the Findings' code (default 100)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--write", action="store_true", help=f"write the tables to {DOC}")
    args = parser.parse_args()
    started = time.time()
    out = []
    with ProcessPoolExecutor(args.workers) as pool:
        seq = {(m, s): (r, cpu) for m, s, r, cpu in pool.map(
            _sequential, [(m, s, args.claims) for m in MIXES for s in SCHEDULES])}
        fixed = {(m, r): v for m, r, v in pool.map(
            _fixed, [(m, r, args.claims) for m in MIXES for r in FIXED])}
        for mix in MIXES:
            rows = {}
            for schedule in SCHEDULES:
                result, _ = seq[(mix, schedule)]
                ours = {r: fixed[(mix, r)] for r in FIXED}
                same = equal_power(result, ours) if mix != "nothing acts" else None
                rows[f"sequential {'/'.join(map(str, schedule))}"] = {
                    **result, "fixed repeats of equal power": same,
                    "repeats ÷ equal-power fixed": (result["mean repeats per block"] / same
                                                    if same else float("nan"))}
            for r in (5, 10, 20, 30):
                rows[f"fixed {r}"] = {**fixed[(mix, r)], "mean repeats per block": float(r)}
            table = pd.DataFrame(rows).T
            table = table[[c for c in ("FDR", "pages with a false claim",
                                       "mean repeats per block", *sorted(
                                           c for c in table if c.startswith("power")),
                                       "fixed repeats of equal power",
                                       "repeats ÷ equal-power fixed") if c in table]]
            table = table.dropna(axis=1, how="all").astype(float)
            blocks = ", ".join(f"{n} {k}" for k, n in MIXES[mix].items())
            out += [f"## Claim level: {mix} ({blocks}; 3 claims a block)", "",
                    markdown(table.T), ""]
            print("\n".join(out[-4:]), flush=True)
        if args.pages:
            halves = max(1, args.workers)
            tasks = [(name, args.pages // halves + (i < args.pages % halves), 1 + i)
                     for name in PAGE_SCENARIOS for i in range(halves)]
            parts: dict[str, list] = {}
            cpu = 0.0
            for name, scored, seconds in pool.map(_pages, tasks):
                parts.setdefault(name, []).append(scored)
                cpu += seconds
    if args.pages:
        from modelvar.calibration.pages import rates

        rows = {}
        for name, frames in parts.items():
            scored = pd.concat(frames, ignore_index=True)
            rows[name] = {**rates(scored), "mean repeats per block":
                          scored.groupby("page")["repeats"].first().mean()}
        table = pd.DataFrame(rows).dropna(how="all").astype(float)
        from modelvar.study.rounds import Schedule

        looks = ", ".join(map(str, Schedule(*PAGE_SCHEDULE).looks()))
        out += [f"## Pages run by the Findings' code (looks at {looks} repeats; "
                f"{args.pages} pages each, {cpu / 60:.0f} CPU minutes)", "",
                markdown(table), ""]
        print("\n".join(out[-4:]), flush=True)
    took = (f"{args.claims:,} claim-level pages per mix and design, {args.pages} pages per "
            f"scenario; {(time.time() - started) / 60:.0f} minutes on {args.workers} workers.")
    print(took)
    if args.write:
        DOC.write_text(HEADER + "\n" + took + "\n\n" + "\n".join(out))
        print(f"written: {DOC}")


HEADER = """# Sequential studies, calibrated (make bench-sequential)

`benchmarks/bench_sequential.py` (module docstring: the simulations). `FDR` is a page's share
of false claims among those it states, averaged over pages; `pages with a false claim` the
share of pages stating any; `power …` per type of block the share of its claims stated
correctly (a tie's: called practically equivalent); `mean repeats per block` what the design
spent; `fixed repeats of equal power` the fewest repeats of a fixed design whose power is at
least the sequential one's on every type with an effect.
"""

if __name__ == "__main__":
    main()
