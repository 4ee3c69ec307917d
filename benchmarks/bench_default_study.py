"""The default study's CPU, this checkout against another (issue 67: start-up paid once per batch
of repeats).

Each round runs ``config/config.yaml`` in a fresh folder with this checkout's workflow and with
``--old`` (a checkout of an earlier commit: ``git archive afc66d6 | tar -x -C DIR``), in
alternating order, and reads:

- the study's CPU: user + system time of Snakemake and every job it ran (the children's rusage
  of the ``snakemake`` process, which waits for each job);
- per dataset × classifier (a *block*), its fit jobs' CPU (each fit job's log ends with its
  process's CPU, start-up and imports included) over its fitting CPU (the runs tables'
  ``fit_cpu_seconds``, fit and predict of every run), and its fit jobs;
- per block of this checkout, the *floor* of that ratio for one job per block: a fit job of one
  run (the block's first cell, repeat 0, run 0) run ``--floor-jobs`` times in the finished
  folder, its process's CPU less its one fit's (``fixed``: start-up, imports, data, warm-up,
  writes), and ``floor = (fitting + fixed) / fitting``: what the block's fit jobs would cost
  over their fitting if every run's own work outside its fit were free. A floor above the
  issue's 1.15 says that no batching of one dataset's repeats can reach it.

Printed: each round's figures, then per side the min and median over rounds, and the ratios
(this / old) of the study's CPU. Usage: ``make bench-default-study ARGS="--old DIR"``; a round
takes ≈ 10 minutes on two cores.
"""

from __future__ import annotations

import argparse
import os
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


def fixed_cost(results: Path, study: dict, dataset: str, classifier: str, cell: str,
               jobs: int) -> list[float]:
    """CPU seconds of a fit job beyond its fits (start-up, imports, the data, warm-up, writes):
    a job of one run (``cell``, repeat 0, run 0) in ``results``' datasets, ``jobs`` times."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(jobs):
            runs = Path(tmp, "runs.parquet")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([
                sys.executable, "-m", "modelvar", "fit",
                "--data", str(results / "datasets" / f"{dataset}.parquet"),
                "--meta", str(results / "datasets" / f"{dataset}.json"),
                "--classifier", classifier, "--cells", cell, "--repeats", "0",
                "--run-block", "0", "1", "--runs", str(study["split"]["runs"]),
                "--test-fraction", str(study["split"]["test_fraction"]),
                "--root-seed", str(study["root_seed"]), "--threads", "1",
                "--predictions", str(Path(tmp, "predictions.parquet")),
                "--runs-out", str(runs), "--manifest", str(Path(tmp, "manifest.json"))],
                check=True, capture_output=True,
                env={**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            job = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            out.append(job - float(pd.read_parquet(runs)["fit_cpu_seconds"].sum()))
    return out


def floors(folder: Path, table: pd.DataFrame, jobs: int) -> pd.DataFrame:
    """``table`` (:func:`blocks`) with each block's fixed cost of a fit job (median of
    ``jobs``) and its floor ratio (module docstring)."""
    import yaml

    study = yaml.safe_load((folder / "study.yaml").read_text())
    runs = pd.read_parquet(folder / "results" / "aggregated" / "runs",
                           columns=["dataset", "classifier", "cell"])
    fixed = {}
    for (dataset, classifier), rows in runs.groupby(["dataset", "classifier"],
                                                    observed=True):
        fixed[(str(dataset), str(classifier))] = statistics.median(fixed_cost(
            folder / "results", study, str(dataset), str(classifier),
            str(rows["cell"].iloc[0]), jobs))
    out = table.copy()
    out["fixed"] = [fixed[key] for key in out.index]
    out["floor"] = (out["fitting_cpu"] + out["fixed"]) / out["fitting_cpu"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="the other checkout")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cores", default="2")
    parser.add_argument("--work", type=Path, help="where to run (default: a temporary folder)")
    parser.add_argument("--floor-jobs", type=int, default=3,
                        help="one-run fit jobs per block for its floor (0: no floors)")
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
            if side == "this" and args.floor_jobs:
                table = floors(folder, table, args.floor_jobs)
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
