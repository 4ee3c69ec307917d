"""What a sequential study would have decided and spent, replayed on a fixed study's folder
(issue 68): the default study run both ways without fitting twice.

A repeat's jobs do not depend on the schedule (one job per repeat, named seeds), so a fixed
study at ``max`` repeats holds every table a sequential study of the same config could read.
The rounds are played on them by the Findings' own code
(:func:`modelvar.calibration.sequential.play_rounds`: looks at start, start + step, …, max,
``--decide`` the claims a block waits for); the fitting CPU of the repeats each block used is
summed from the runs table (``fit_cpu_seconds``, as recorded when the fixed study ran) and set
beside the fixed study's own, with the headline and exploratory claims each decides.

Usage: ``make bench-sequential-replay ARGS="RESULTS [--start 3] [--step 3] [--decide leaders]"``
on a folder run with ``split.repeats`` = max (30 for ``config/sequential.yaml``'s schedule).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd


def main() -> None:
    from modelvar.calibration.sequential import play_rounds
    from modelvar.findings import study as findings
    from modelvar.study.design import read_designs, study_roles
    from modelvar.study.rounds import DECIDE, Rounds, Schedule

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="a fixed study's results folder")
    parser.add_argument("--start", type=int, default=3)
    parser.add_argument("--step", type=int, default=3)
    parser.add_argument("--decide", choices=DECIDE, default="leaders")
    args = parser.parse_args()

    def files(kind: str) -> list[str]:
        return sorted(str(p) for p in (args.results / "aggregated" / kind).rglob("*.parquet"))

    runs_all = pd.read_parquet(args.results / "aggregated" / "runs")
    repeats = int(runs_all["repeat"].max()) + 1
    tables = {"summary": findings.read_summaries(files("summary")),
              "agreement": findings.read_tables(files("agreement"),
                                                columns=findings.AGREEMENT_COLUMNS),
              "runs": findings.read_tables(files("runs"), columns=findings.runs_columns()),
              "roles": study_roles(read_designs(sorted(str(p) for p in
                                                       (args.results / "design").glob("*.json"))))}
    schedule = Schedule(args.start, args.step, repeats)
    rounds = Rounds.first(schedule, tables["roles"], args.decide)
    start = time.process_time()
    judged = play_rounds(tables, rounds)
    used = {name: block.repeats for name, block in rounds.blocks.items()}
    block = runs_all["dataset"].astype(str) + "|" + runs_all["classifier"].astype(str)
    spent = runs_all.loc[(runs_all["repeat"] < block.map(used)).to_numpy(), "fit_cpu_seconds"]
    fixed = pd.read_parquet(args.results / "aggregated" / "study" / "verdicts.parquet")
    print(f"looks {', '.join(map(str, schedule.looks()))}; decide: {args.decide}; "
          f"{rounds.round} rounds replayed in {time.process_time() - start:.0f} s CPU")
    print(judged.tables["blocks"][["dataset", "classifier", "repeats", "claims",
                                   "open_claims", "status"]].to_string(index=False))
    whole = runs_all["fit_cpu_seconds"].sum()
    print(f"fitting CPU: sequential {spent.sum():.0f} s, fixed at {repeats} repeats "
          f"{whole:.0f} s ({spent.sum() / whole:.2f}×)")
    for name, verdicts in (("sequential", judged.tables["verdicts"]), ("fixed", fixed)):
        head = verdicts[verdicts["tier"] == "headline"]
        kinds = ", ".join(f"{kind} {int(g['holds'].sum())}/{len(g)}"
                          for kind, g in head.groupby("kind"))
        rest = verdicts[verdicts["tier"] != "headline"]
        print(f"{name}: headline {int(head['holds'].sum())} of {len(head)} hold ({kinds}); "
              f"exploratory {int(rest['holds'].sum())} of {len(rest)}")


if __name__ == "__main__":
    main()
