"""The Findings' verdicts calibrated (issue 53): false-claim rates and power on simulated pages.

Two parts, both simulations with a known truth (:mod:`modelvar.findings.calibration`):

1. **Single tests at 5 %**, before the page's multiplicity control: the variance shares'
   leader test (jackknife, against every other factor) where two families tie at the top (with
   equal or unequal interactions with the repeat), where a family ties with the repeat, where
   nothing acts, and where one family is first; and the equivalence test (two one-sided
   tests) at a true ratio on the margin: each one's rate at 3, 5, 8, 10 and 20 repeats. The
   shares are ranked only from the fewest repeats at which their test's size is at most 5 % in
   every case (``modelvar.findings.components.MIN_CLUSTERS``); the last case is its power.
2. **Pages**: ``--pages`` simulated pages per scenario (a tie at the top, nothing acting,
   planted effects) and repeat count, each judged by the page's own code, every stated claim
   scored: the FDR, the share of pages with any false claim, per kind of claim the share of
   its rows that made a false claim and of the pages that carry one, and the power.

Usage: ``make bench-verdicts`` (``python benchmarks/bench_verdicts.py [--pages N] [--write]``;
``--write`` puts the tables into docs/measurements/verdicts.md). With 1,000 pages it runs about
an hour on two cores; every draw comes from named seeds, so a rerun prints the same numbers.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

REPEATS = (3, 5, 8, 10, 20)
SCENARIOS = ("tie", "null", "planted")
DOC = Path(__file__).resolve().parents[1] / "docs" / "measurements" / "verdicts.md"


# ------------------------------------------------------------------ single tests
def _grid(rng, repeats: int, effects: dict[str, float], repeat_sd: float, interaction_sd: float,
          runs: int = 5, noise_sd: float = 0.01) -> pd.DataFrame:
    """Run accuracies of a 2 × 2 × 2 grid (data, hparam, training fraction) over repeats."""
    levels = {"data": ("dnone", "rel0p2"), "hparam": ("hnone", "hrel0p1"),
              "downsample": ("down100", "down050")}
    names = list(levels)
    cells = np.array(np.meshgrid(*[[0, 1]] * 3, indexing="ij")).reshape(3, -1).T
    b = rng.normal(0, repeat_sd, repeats)
    sign = cells - 0.5
    slope = np.array([effects[f] for f in names])[None, :] + \
        rng.normal(0, interaction_sd, (repeats, 3)) if interaction_sd else \
        np.tile(np.array([effects[f] for f in names]), (repeats, 1))
    mean = 0.8 + b[None, :] + sign @ slope.T  # cells × repeats
    y = mean[:, :, None] + rng.normal(0, noise_sd, (*mean.shape, runs))
    c, r, _ = np.meshgrid(np.arange(len(cells)), np.arange(repeats), np.arange(runs),
                          indexing="ij")
    frame = pd.DataFrame({f: np.array(levels[f])[cells[c.ravel(), i]]
                          for i, f in enumerate(names)})
    frame["repeat"] = r.ravel()
    frame["accuracy"] = y.ravel()
    return frame


#: the single-test scenarios of the shares' leader: (effects of data, hparam, training
#: fraction; the repeat's SD; the families' interaction with the repeat; training fraction's
#: own extra interaction), and whether a leader is truly first (power) or not (size)
SHARE_CASES = {
    "tie of two families": ({"data": 0.02, "hparam": 0.005, "downsample": 0.02}, 0.005, 0.004,
                            0.0, False),
    "tie, one with 3× the interaction": ({"data": 0.02, "hparam": 0.005, "downsample": 0.02},
                                         0.005, 0.0, 0.012, False),
    "tie of a family and the repeat": ({"data": 0.02, "hparam": 0.005, "downsample": 0.005},
                                       0.01, 0.003, 0.0, False),
    "nothing acts": ({"data": 0.0, "hparam": 0.0, "downsample": 0.0}, 0.0, 0.0, 0.0, False),
    "one family first (power)": ({"data": 0.04, "hparam": 0.005, "downsample": 0.02}, 0.005,
                                 0.004, 0.0, True),
}


def share_test_rate(case: str, repeats: int, n: int, seed: int) -> float:
    """The share of ``n`` simulated grids of a :data:`SHARE_CASES` case whose leader test
    (against every other factor) rejects at 5 %: the size where no factor is truly first,
    the power where one is (and is the one named)."""
    from modelvar.findings.components import variance_components

    effects, repeat_sd, interaction_sd, extra, _ = SHARE_CASES[case]
    rng = np.random.default_rng([seed, repeats, list(SHARE_CASES).index(case)])
    rejected = 0
    for _ in range(n):
        frame = _grid(rng, repeats, effects, repeat_sd, interaction_sd)
        if extra:
            slope = rng.normal(0, extra, repeats)
            sign = np.where(frame["downsample"] == "down050", 0.5, -0.5)
            frame["accuracy"] += sign * slope[frame["repeat"].to_numpy()]
        table = variance_components(frame, "accuracy", replicated=True, min_repeats=3)
        lead = table.dropna(subset=["lead_p"])
        rejected += bool(len(lead) and lead["lead_p"].iloc[0] <= 0.05 and (
            not SHARE_CASES[case][4] or lead["component"].iloc[0] == "data perturbation"))
    return rejected / n


def equivalence_size(repeats: int, n: int, seed: int, margin: float = 1.25) -> float:
    """The share of ``n`` comparisons whose true ratio is on the margin (a null of the
    equivalence test) called practically equivalent at 5 %."""
    from modelvar.findings.paired import Compared

    rng = np.random.default_rng([seed, repeats, 7])
    hits = 0
    for _ in range(n):
        shared = rng.normal(0, 0.2, repeats)
        a = pd.Series(0.1 * margin * np.exp(shared + rng.normal(0, 0.15, repeats)))
        b = pd.Series(0.1 * np.exp(shared + rng.normal(0, 0.15, repeats)))
        hits += Compared.between("a − b", a, b, margin).p_equivalent <= 0.05
    return hits / n


# ------------------------------------------------------------------ pages
def _pages(task: tuple[str, int, int, int]) -> tuple[str, int, pd.DataFrame, float]:
    from modelvar.findings.calibration import run_pages

    name, repeats, pages, seed = task
    start = time.process_time()
    scored = run_pages(name, pages=pages, repeats=repeats, seed=seed)
    scored["page"] += seed * 1_000_000
    return name, repeats, scored, time.process_time() - start


def markdown(frame: pd.DataFrame) -> str:
    """A table in Markdown, its index as the first column, numbers with three decimals."""
    def cell(v) -> str:
        if isinstance(v, float | np.floating):
            return "–" if not np.isfinite(v) else f"{v:,.0f}" if v > 1 and v == int(v) \
                else f"{v:.3f}"
        return str(v)

    head = ["", *map(str, frame.columns)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join([str(i), *map(cell, row)]) + " |"
              for i, row in zip(frame.index, frame.to_numpy(), strict=True)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1000,
                        help="simulated pages per scenario and repeat count (default 1,000)")
    parser.add_argument("--single", type=int, default=1000,
                        help="simulations per single test and repeat count (default 1,000)")
    parser.add_argument("--repeats", default=",".join(map(str, REPEATS)))
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--write", action="store_true", help=f"write the tables to {DOC}")
    args = parser.parse_args()
    repeats = [int(r) for r in args.repeats.split(",")]
    out = []
    started = time.time()
    with ProcessPoolExecutor(args.workers) as pool:
        singles = {}
        if args.single:
            jobs = {(case, r): pool.submit(share_test_rate, case, r, args.single, 53)
                    for case in SHARE_CASES for r in repeats}
            jobs.update({("equivalence", r): pool.submit(equivalence_size, r, args.single, 53)
                         for r in repeats})
            singles = {k: f.result() for k, f in jobs.items()}
            rows = [{"test": f"shares' leader: {case}", "repeats": r,
                     "rejections at 5 %": singles[(case, r)]}
                    for case in SHARE_CASES for r in repeats]
            rows += [{"test": "equivalence: true ratio on the margin", "repeats": r,
                      "rejections at 5 %": singles[("equivalence", r)]} for r in repeats]
            single = pd.DataFrame(rows).pivot(index="test", columns="repeats",
                                              values="rejections at 5 %")
            single = single.loc[list(dict.fromkeys(r["test"] for r in rows))]
            se = math.sqrt(0.05 * 0.95 / args.single)
            out += ["## Single tests at 5 %, before the page's control",
                    f"{args.single:,} simulations each (a size of 0.05 has a standard error of "
                    f"{se:.3f}).", "", markdown(single), ""]
            print("\n".join(out[-4:]), flush=True)
        halves = max(1, args.workers)
        tasks = [(name, r, args.pages // halves + (i < args.pages % halves), 1 + i)
                 for name in SCENARIOS for r in repeats for i in range(halves)]
        results: dict[tuple[str, int], list[pd.DataFrame]] = {}
        cpu = 0.0
        for name, r, scored, seconds in pool.map(_pages, tasks):
            results.setdefault((name, r), []).append(scored)
            cpu += seconds
    from modelvar.findings.calibration import rates

    rows = []
    for (name, r), parts in results.items():
        rows.append({"scenario": name, "repeats": r,
                     **rates(pd.concat(parts, ignore_index=True))})
    pages = pd.DataFrame(rows)
    for name in SCENARIOS:
        part = pages[pages["scenario"] == name].drop(columns="scenario")
        part = part.dropna(axis=1, how="all")
        out += [f"## Pages: {name}", "", markdown(part.set_index("repeats").T), ""]
        print("\n".join(out[-4:]), flush=True)
    took = (f"{args.pages:,} pages per scenario and repeat count; {cpu / 60:.0f} CPU minutes "
            f"for the pages, {(time.time() - started) / 60:.0f} minutes on {args.workers} "
            "workers.")
    print(took)
    if args.write:
        DOC.write_text(HEADER + "\n" + took + "\n\n" + "\n".join(out))
        print(f"written: {DOC}")


HEADER = """# The Findings' verdicts, calibrated (make bench-verdicts)

`benchmarks/bench_verdicts.py` simulates pages whose truth is known
(`modelvar.findings.calibration`: the default config's design, 2 datasets × 2 classifiers,
10 runs a repeat) and judges them with the Findings' own code. Rates: `FDR` is the page's share
of false claims among those it states, averaged over pages; `pages with a false claim` the share
of pages stating any; per kind of claim (`most`: a dataset × classifier's leading source;
`largest share`: the variance shares' leader; `classifiers`: two classifiers compared;
`combined`: a source alone against all combined), `false per …` is the share of its rows that
stated a false claim (a tie called told apart, a ratio off the margin called equivalent, a
sign stated wrongly), `pages with a false …` the share of pages carrying one, and `power …` the
share of rows whose truth allows a claim that stated it (NaN: the scenario allows none).
"""

if __name__ == "__main__":
    main()
