"""Sequential studies calibrated (issues 56, 68): false claims under any stopping, power and
repeats against the fixed design of equal power, and what the futility rule costs.

Four parts, simulations with a known truth (:mod:`modelvar.calibration.sequential`, the study's
own stopping rule: :mod:`modelvar.study.claim_paths`):

1. **Per claim**, before the page's control (``--paths`` each): one comparison of effect δ SDs
   (0, 0.3, 0.5, 0.7, 1.0, 1.5; margin 0.5 SD, as a real page's comparisons' median; and 0.3,
   where futility acts more) at level 0.05, looked at 3, 6, …, 30 repeats: its power and mean
   repeats with the exact boundaries and the futility rule, without the futility rule, and
   with issue 56's spending (the union bound, p* = min_k p_k / s_k, no futility); the fixed
   design of equal power (the fewest repeats of one look with at least that power, capped at
   0.99) and the ratio of the sequential design's mean repeats to it.
2. **Pages, adversarial** (``--pages`` each): pages of 1, 5 and 20 blocks of 3 claims, ties
   only or a realistic mix (effects 0, 0, 0.3, 0.5, 0.7, 1.0, 1.5 SDs, cycled), every claim a
   headline claim (Holm) or every one exploratory (Benjamini–Yekutieli), normal or t₃
   differences; blocks stopped by the rule, or never (every block to the last look: the worst
   case, a sequential p-value only falls with more looks). The headline family's rate of pages
   with a false claim, the exploratory FDR.
3. **Pages run by the Findings' code** (``--findings-pages`` per scenario): the verdicts
   issue's simulated pages, looks at 3, 6, 9 repeats, every claim of the last round scored.
4. **The plan's prior** for the default schedule: the repeats per block it expects before
   findings (:func:`modelvar.study.claim_paths.prior_repeats`).

Usage: ``make bench-sequential`` (``python benchmarks/bench_sequential.py [--paths N]
[--pages N] [--findings-pages N] [--write]``; ``--write`` puts the tables into
docs/measurements/sequential.md). Every draw comes from named seeds: a rerun prints the same
numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_verdicts import markdown

DOC = Path(__file__).resolve().parents[1] / "docs" / "measurements" / "sequential.md"
EFFECTS = (0.0, 0.3, 0.5, 0.7, 1.0, 1.5)
MARGINS = (0.5, 0.3)
SCHEDULE = (3, 3, 30)
#: a schedule whose last look has 80 % power at δ = 0.5 (level 0.05): the design a group-
#: sequential study is planned as for that effect
PLANNED = (3, 3, 36)
DESIGNS = ("exact + futility", "exact, no futility", "union bound (issue 56)")
BLOCKS = (1, 5, 20)
REALISTIC = (0.0, 0.0, 0.3, 0.5, 0.7, 1.0, 1.5)
PAGE_SCENARIOS = ("null", "tie", "planted")
PAGE_SCHEDULE = (3, 3, 9)
#: Findings pages whose blocks wait for their leading sources only (``decide: leaders``)
LEADERS_SCHEDULE = (3, 3, 15)


def union_levels(p, n: int, looks: tuple[int, ...], spending: str = "") -> np.ndarray:
    """Issue 56's spending: each look's p over its linear share of the level."""
    i = looks.index(n)
    share = (n - (looks[i - 1] if i else 0)) / looks[-1]
    p = np.asarray(p, float)
    return np.where(np.isfinite(p), np.minimum(1.0, p / share), np.nan)


def _looks(schedule: tuple[int, int, int]) -> str:
    from modelvar.study.rounds import Schedule

    at = Schedule(*schedule).looks()
    return ", ".join(map(str, at)) if len(at) <= 3 else f"{at[0]}, {at[1]}, …, {at[-1]}"


def _per_claim(task):
    from modelvar.calibration.sequential import equal_power_repeats, per_claim
    from modelvar.study.rounds import Schedule

    effect, margin, paths, looks = task
    kw = {"schedule": Schedule(*looks), "paths": paths, "seed": 68, "margin": margin}
    runs = {DESIGNS[0]: per_claim(effect, **kw)}
    if looks == SCHEDULE:
        runs[DESIGNS[1]] = per_claim(effect, stop="no futility", **kw)
        runs[DESIGNS[2]] = per_claim(effect, stop="no futility", levels=union_levels, **kw)
    rows = {}
    for design, (power, repeats) in runs.items():
        same = equal_power_repeats(effect, power, paths=max(paths, 20_000), seed=68,
                                   margin=margin)
        rows[design] = {"power": power, "mean repeats": repeats,
                        "fixed repeats of equal power": same,
                        "ratio": repeats / same if same else np.nan}
    return effect, margin, rows


def _pages(task):
    from modelvar.calibration.sequential import claim_rates, run_claims
    from modelvar.findings.multiplicity import EXPLORATORY, HEADLINE
    from modelvar.study.rounds import Schedule

    mix, blocks, tier, tails, stop, pages = task
    kinds = (0.0,) if mix == "ties" else REALISTIC
    effects = np.repeat([kinds[i % len(kinds)] for i in range(blocks)], 3).astype(float)
    page = (effects, np.full(effects.size, 0.5), np.repeat(np.arange(blocks), 3),
            np.full(effects.size, HEADLINE if tier == "headline" else EXPLORATORY))
    seed = 680 + BLOCKS.index(blocks) + 10 * (tails is not None)
    paths = run_claims(*page, schedule=Schedule(*SCHEDULE), pages=pages, seed=seed, stop=stop,
                       tails=tails)
    rates = claim_rates(paths, page[0], page[3])
    key = "headline: pages with a false claim" if tier == "headline" else "exploratory: FDR"
    return task[:5], rates[key], rates["mean repeats per block"]


def _findings_pages(task):
    from modelvar.calibration.sequential import run_sequential_pages
    from modelvar.study.rounds import Schedule

    name, pages, seed, looks, decide = task
    start = time.process_time()
    scored = run_sequential_pages(name, pages=pages, schedule=Schedule(*looks), seed=seed,
                                  decide=decide)
    scored["page"] += seed * 1_000_000
    return (name, decide), scored, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paths", type=int, default=20_000,
                        help="simulated claims per effect, margin and design (default 20,000)")
    parser.add_argument("--pages", type=int, default=1000,
                        help="simulated pages per adversarial case (default 1,000)")
    parser.add_argument("--findings-pages", type=int, default=40,
                        help="pages per scenario run by the Findings' code (default 40)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--write", action="store_true", help=f"write the tables to {DOC}")
    args = parser.parse_args()
    started = time.time()
    out: list[str] = []
    with ProcessPoolExecutor(args.workers) as pool:
        tasks = [(e, m, args.paths, SCHEDULE) for m in MARGINS for e in EFFECTS] + \
            [(e, MARGINS[0], args.paths, PLANNED) for e in EFFECTS]
        per = list(pool.map(_per_claim, tasks))
        for margin, looks in [(m, SCHEDULE) for m in MARGINS] + [(MARGINS[0], PLANNED)]:
            rows = {}
            for (_, m, _, at), (effect, _, result) in zip(tasks, per, strict=True):
                if (m, at) != (margin, looks):
                    continue
                row = {}
                for design, r in result.items():
                    row[f"{design}: power"] = r["power"]
                    row[f"{design}: mean repeats"] = r["mean repeats"]
                    row[f"{design}: ÷ equal-power fixed"] = r["ratio"]
                row["fixed repeats of equal power (exact + futility)"] = \
                    result[DESIGNS[0]]["fixed repeats of equal power"]
                if DESIGNS[1] in result:
                    row["futility keeps of the power"] = (
                        result[DESIGNS[0]]["power"] / result[DESIGNS[1]]["power"]
                        if result[DESIGNS[1]]["power"] > 0 else np.nan)
                rows[f"δ = {effect:g}"] = row
            table = pd.DataFrame(rows).astype(float)
            planned = " (the last look planned for 80 % power at δ = 0.5)" \
                if looks == PLANNED else ""
            out += [f"## Per claim, margin {margin} SD (looks at {_looks(looks)}{planned}; "
                    f"level 0.05; {args.paths:,} claims each)", "", markdown(table), ""]
            print("\n".join(out[-4:]), flush=True)
        cases = [(mix, blocks, tier, tails, stop, args.pages)
                 for mix in ("ties", "realistic") for tier in ("headline", "exploratory")
                 for tails in (None, 3.0) for stop in ("never", "rule") for blocks in BLOCKS]
        rows = {}
        for (mix, blocks, tier, tails, stop), rate, repeats in pool.map(_pages, cases):
            name = (f"{mix}, {tier}, {'t₃' if tails else 'normal'}, "
                    f"{'never stopped' if stop == 'never' else 'the rule'}")
            what = "pages with a false claim" if tier == "headline" else "FDR"
            rows.setdefault(name, {})[f"{blocks} blocks: {what}"] = rate
            rows[name][f"{blocks} blocks: mean repeats"] = repeats
        table = pd.DataFrame(rows).T.astype(float)
        out += [f"## Pages, adversarial ({args.pages:,} pages each; 3 claims a block, margin "
                "0.5 SD)", "", markdown(table), ""]
        print("\n".join(out[-4:]), flush=True)
        if args.findings_pages:
            halves = max(1, args.workers)
            runs = [(name, PAGE_SCHEDULE, "all") for name in PAGE_SCENARIOS] + \
                [("planted", LEADERS_SCHEDULE, "leaders")]
            tasks = [(name, args.findings_pages // halves + (i < args.findings_pages % halves),
                      1 + i, looks, decide) for name, looks, decide in runs
                     for i in range(halves)]
            tasks = [task for task in tasks if task[1]]
            parts: dict[str, list] = {}
            cpu = 0.0
            for name, scored, seconds in pool.map(_findings_pages, tasks):
                parts.setdefault(name, []).append(scored)
                cpu += seconds
    if args.findings_pages:
        from modelvar.calibration.pages import rates

        rows = {}
        for (name, decide), frames in parts.items():
            scored = pd.concat(frames, ignore_index=True)
            label = name if decide == "all" else \
                f"{name}, decide: {decide}, looks at {_looks(LEADERS_SCHEDULE)}"
            rows[label] = {**rates(scored), "mean repeats per block":
                           scored.groupby("page")["repeats"].first().mean()}
        table = pd.DataFrame(rows).dropna(how="all").astype(float)
        out += [f"## Pages run by the Findings' code (looks at {_looks(PAGE_SCHEDULE)} "
                f"repeats, decide: all, unless said; {args.findings_pages} pages each, "
                f"{cpu / 60:.0f} CPU minutes)", "", markdown(table), ""]
        print("\n".join(out[-4:]), flush=True)
    from modelvar.study.claim_paths import prior_repeats
    from modelvar.study.rounds import Schedule

    prior = prior_repeats(Schedule(*SCHEDULE))
    out += [f"The plan's prior for looks at {_looks(SCHEDULE)}: {prior:.1f} repeats per block.",
            ""]
    took = (f"{args.paths:,} claims per effect and design, {args.pages:,} pages per adversarial "
            f"case, {args.findings_pages} Findings pages per scenario; "
            f"{(time.time() - started) / 60:.0f} minutes on {args.workers} workers.")
    print(out[-2], took, sep="\n")
    if args.write:
        text = DOC.read_text() if DOC.is_file() else ""
        kept = text[text.index(KEEP):] if KEEP in text else ""
        DOC.write_text(HEADER + "\n" + took + "\n\n" + "\n".join(out) + "\n" + kept)
        print(f"written: {DOC}")


HEADER = """# Sequential studies, calibrated (make bench-sequential)

`benchmarks/bench_sequential.py` (module docstring: the simulations). `power` is the share of
claims stated correctly (told apart with the right sign, or practically equivalent where the
effect is within the margin; a tie only by its equivalence); `mean repeats` what the design
spent; `÷ equal-power fixed` the mean repeats over the fewest repeats of a fixed design (one
look) with at least that power (capped at 0.99); `pages with a false claim` the share of pages
whose headline family states any false claim (what Holm bounds at 5 %); `FDR` the exploratory
claims' share of false ones among those stated, averaged over pages (what Benjamini–Yekutieli
bounds at 5 %).
"""
#: what --write keeps of the file: the sections measured by hand below the tables
KEEP = "## Measured by hand"

if __name__ == "__main__":
    main()
