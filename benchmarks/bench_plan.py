"""Benchmark: the plan's estimates against a finished run (issue 13: fit time within 2x,
storage within 20 %).

    python benchmarks/bench_plan.py [RESULTS] [-- SNAKEMAKE CONFIG ARGS]

For every fit job of the run: the plan's estimate of its fitting time (Σ over its fits of the
cost model's seconds) against the measured fitting time of its runs table (CPU seconds:
modelvar.pipeline.result_tables.fit_cost), and the plan's job estimate with start-up against the
job's CPU time (its log's last line: the process's CPU, start-up and imports included; Snakemake's
benchmark ``cpu_time`` samples too rarely for jobs of a minute) and wall time (the benchmark
file); per dataset ×
classifier the plan's bytes of prediction files and of metric tables against the files on disk.
Prints the ratios (estimate / measured): min, median, max.
"""

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from modelvar.pipeline.result_tables import fit_cost, table_path
from modelvar.planning.plan import FIT_OVERHEAD_SECONDS, STARTUP_SECONDS
from modelvar.planning.plan_report import storage_on_disk
from modelvar.running.workflow_config import plan_of_command_line

REPO = Path(__file__).resolve().parents[1]


def ratios(label: str, values) -> str:
    v = np.asarray(values, dtype=float)
    return (f"{label}: estimate/measured min {v.min():.2f}, median {np.median(v):.2f}, "
            f"max {v.max():.2f} over {len(v)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", default=str(REPO / "results"))
    parser.add_argument("snakemake_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = [a for a in args.snakemake_args if a != "--"] or [
        "--configfile", str(REPO / "config" / "config.yaml")]
    plan, _config = plan_of_command_line(argv)
    results = Path(args.results)
    rows = []
    for name, ds in plan.datasets.items():
        for clf, cp in ds.classifiers.items():
            for job in cp.fit_jobs:
                runs_file = Path(table_path(results, "runs", name, clf, job.id))
                bench = results / "benchmarks" / "fit" / name / clf / f"{job.id}.tsv"
                if not runs_file.is_file():
                    continue
                runs = pd.read_parquet(runs_file)
                timed = pd.read_csv(bench, sep="\t").iloc[0] if bench.is_file() else None
                log = results / "logs" / "fit" / name / clf / f"{job.id}.log"
                cpu = re.findall(r"the job's CPU so far ([0-9.]+) s",
                                 log.read_text() if log.is_file() else "")
                # the shape alone: without the data factor of the plan's probe fits
                factor = plan.data_factors.get((name, clf), 1.0)
                overhead = FIT_OVERHEAD_SECONDS * job.fits
                rows.append({"dataset": name, "classifier": clf, "job": job.id,
                             "fits": len(runs), "estimate_s": job.seconds,
                             "shape_only_s": (job.seconds - overhead) / factor + overhead,
                             "measured_fit_s": fit_cost(runs)[0].sum(),
                             "estimate_job_s": job.seconds + STARTUP_SECONDS,
                             "measured_job_s": float(cpu[-1]) if cpu else np.nan,
                             "job_wall_s": np.nan if timed is None else timed["s"]})
    if not rows:
        sys.exit(f"no runs tables of this plan's jobs in {results}")
    frame = pd.DataFrame(rows)
    storage = pd.DataFrame(storage_on_disk(plan, results))
    storage = storage[storage["pred_bytes"] > 0]
    frame["fit_ratio"] = frame["estimate_s"] / frame["measured_fit_s"]
    frame["shape_ratio"] = frame["shape_only_s"] / frame["measured_fit_s"]
    frame["job_ratio"] = frame["estimate_job_s"] / frame["measured_job_s"]
    pd.set_option("display.width", 200)
    print(frame[["dataset", "classifier", "job", "fits", "estimate_s", "measured_fit_s",
                 "fit_ratio", "shape_ratio", "estimate_job_s", "measured_job_s", "job_wall_s",
                 "job_ratio"]]
          .round(2).to_string(index=False))
    print(ratios("fitting time per job", frame["fit_ratio"]))
    print(ratios("fitting time per job, the shape alone (no probe fits)", frame["shape_ratio"]))
    print(ratios("job CPU time", frame["job_ratio"].dropna()))
    print(ratios("prediction bytes per dataset x classifier",
                 storage["pred_bytes_estimate"] / storage["pred_bytes"]))
    print(ratios("metric-table bytes per dataset x classifier",
                 storage["table_bytes_estimate"] / storage["table_bytes"]))
    total = (storage["pred_bytes_estimate"] + storage["table_bytes_estimate"]).sum() / \
        (storage["pred_bytes"] + storage["table_bytes"]).sum()
    print(f"storage in all: estimate/measured {total:.2f} (goal: within 20 %)")


if __name__ == "__main__":
    main()
