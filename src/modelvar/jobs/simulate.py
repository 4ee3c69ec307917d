"""The ``simulate`` job: simulated runs of the metric study (seed 000)."""

from __future__ import annotations

import argparse
import logging

from modelvar.jobs.common import add_manifest, job_manifest
from modelvar.simulation.class_distributions import DISTRIBUTIONS

#: the command (modelvar.jobs: its help texts are no part of the code version)
NOT_RESULTS = ("help", "description", "metavar")
COMMAND = dict(
    name="simulate",
    help="(job) simulated runs for the metric study (seed 000)",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_manifest(p)
    p.add_argument("--root-seed", type=int, required=True,
                   help="root of every named random stream")
    p.add_argument("--n-classes", type=int, required=True, help="number of classes")
    p.add_argument("--distributions", nargs="+", choices=DISTRIBUTIONS,
                   default=list(DISTRIBUTIONS), help="class-distribution types")
    p.add_argument("--replicates", type=int, default=10, help="simulations per design point")
    p.add_argument("--n-samples", type=int, default=500, help="test samples per simulation")
    p.add_argument("--runs", type=int, default=10, help="runs per simulation")
    p.add_argument("--out", required=True, help="the simulations table to write")


def run(args: argparse.Namespace) -> int:
    from modelvar.seeding import stream
    from modelvar.simulation.metric_study import run_simulations, simulation_grid

    name = stream(args.root_seed, "metric-simulation", scheme=f"classes={args.n_classes}")
    design = simulation_grid(n_classes=[args.n_classes], distributions=args.distributions,
                             replicates=args.replicates)
    sims = run_simulations(design, n_samples=args.n_samples, n_runs=args.runs,
                           rng=name.generator())
    sims["stream"] = str(name)
    with job_manifest(args, "simulate", n_classes=args.n_classes) as manifest:
        manifest.write_parquet(sims, args.out)
    logging.getLogger("modelvar.simulate").info("%d simulations with %d classes -> %s",
                                                len(sims), args.n_classes, args.out)
    return 0

