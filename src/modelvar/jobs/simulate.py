"""The ``simulate`` job: simulated runs of the metric study (seed 000)."""

from __future__ import annotations

import argparse
import logging

from modelvar.jobs.common import job_manifest


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

