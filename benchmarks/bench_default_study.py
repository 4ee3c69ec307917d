"""The default study's CPU, this checkout against another (issue 67: start-up paid once per batch
of repeats).

Each round runs ``config/config.yaml`` in a fresh folder with this checkout's workflow and with
``--old`` (a checkout of an earlier commit: ``git archive afc66d6 | tar -x -C DIR``), in
alternating order, and reads:

- the study's CPU: user + system time of Snakemake and every job it ran (the children's rusage
  of the ``snakemake`` process, which waits for each job);
- per dataset × classifier (a *block*), its fit jobs' CPU (each fit job's log ends with its
  process's CPU, start-up and imports included) over its fitting CPU (the runs tables'
  ``fit_cpu_seconds``, fit and predict of every run), and its fit jobs.

Printed: each round's figures, then per side the min and median over rounds, and the ratios
(this / old) of the study's CPU. Usage: ``make bench-default-study ARGS="--old DIR"``; a round
takes ≈ 10 minutes on two cores.
"""

from __future__ import annotations

import argparse
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
JOB_CPU = re.compile(r"the job's CPU so far ([0-9.]+) s")


def run_study(tree: Path, work: Path, cores: str) -> float:
    """The study's CPU seconds, run with ``tree``'s workflow in ``work``."""
    work.mkdir(parents=True)
    shutil.copy(tree / "config" / "config.yaml", work / "study.yaml")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(tree / "Snakefile"),
                           "--directory", str(work), "--configfile", str(work / "study.yaml"),
                           "--cores", cores], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"snakemake failed in {work}:\n{proc.stderr[-3000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def blocks(results: Path) -> pd.DataFrame:
    """Per dataset × classifier: fit jobs, their CPU (logs) and the fitting CPU (runs)."""
    rows = []
    for log in sorted((results / "logs").glob("fit*/*/*/*.log")):
        found = JOB_CPU.findall(log.read_text())
        if not found:
            raise SystemExit(f"{log} does not end with the job's CPU")
        rows.append({"dataset": log.parts[-3], "classifier": log.parts[-2],
                     "job_cpu": float(found[-1])})
    jobs = pd.DataFrame(rows).groupby(["dataset", "classifier"]).agg(
        jobs=("job_cpu", "size"), job_cpu=("job_cpu", "sum"))
    runs = pd.read_parquet(results / "aggregated" / "runs", columns=["fit_cpu_seconds",
                                                                     "dataset", "classifier"])
    runs["dataset"] = runs["dataset"].astype(str)
    runs["classifier"] = runs["classifier"].astype(str)
    fitting = runs.groupby(["dataset", "classifier"])["fit_cpu_seconds"].sum()
    out = jobs.join(fitting.rename("fitting_cpu"))
    out["ratio"] = out["job_cpu"] / out["fitting_cpu"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="the other checkout")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cores", default="2")
    parser.add_argument("--work", type=Path, help="where to run (default: a temporary folder)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-default-study-"))
    sides = {"this": REPO, "old": args.old.resolve()}
    study_cpu: dict[str, list[float]] = {side: [] for side in sides}
    for r in range(args.rounds):
        order = list(sides) if r % 2 == 0 else list(reversed(sides))
        for side in order:
            folder = work / f"{side}-{r}"
            cpu = run_study(sides[side], folder, args.cores)
            study_cpu[side].append(cpu)
            table = blocks(folder / "results")
            print(f"round {r} {side}: study CPU {cpu:.1f} s; fit jobs {int(table['jobs'].sum())}"
                  f", their CPU {table['job_cpu'].sum():.1f} s, fitting CPU "
                  f"{table['fitting_cpu'].sum():.1f} s, the rest "
                  f"{cpu - table['job_cpu'].sum():.1f} s", flush=True)
            print(table.round(2).to_string(), flush=True)
    for side, values in study_cpu.items():
        print(f"{side}: study CPU min {min(values):.1f} s, median "
              f"{statistics.median(values):.1f} s")
    ratios = [a / b for a, b in zip(study_cpu["this"], study_cpu["old"], strict=True)]
    print(f"this / old, round by round: {', '.join(f'{x:.3f}' for x in ratios)}; min "
          f"{min(ratios):.3f}, median {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
