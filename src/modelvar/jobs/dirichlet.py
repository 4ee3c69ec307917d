"""The ``dirichlet`` job: the Dirichlet probability simulation (seed 002)."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from modelvar.jobs.common import add_drawing, add_manifest, job_manifest

#: the command (modelvar.jobs: its help texts are no part of the code version)
NOT_RESULTS = ("help", "description", "metavar")
COMMAND = dict(
    name="dirichlet",
    help="(job) Dirichlet probability simulation (seed 002)",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_manifest(p)
    add_drawing(p)
    p.add_argument("--root-seed", type=int, required=True,
                   help="root of every named random stream")
    p.add_argument("--n", type=int, default=1000, help="samples per case")
    p.add_argument("--cases", required=True, help='JSON {"case name": [alpha, ...]}')
    p.add_argument("--out-dir", required=True, help="where the tables and figures go")


def run(args: argparse.Namespace) -> int:
    from modelvar.plots.common import set_width
    from modelvar.plots.simulation import (
        dirichlet_ci_vs_h,
        dirichlet_class_densities,
        dirichlet_h_ci_densities,
    )
    from modelvar.seeding import stream
    from modelvar.simulation import FIGURES
    from modelvar.simulation.dirichlet import simulate_cases, spearman_table
    from modelvar.study.figures import FORMATS

    set_width(args.width)

    cases = json.loads(args.cases)
    rng = stream(args.root_seed, "dirichlet-simulation").generator()
    probs, per_sample = simulate_cases(cases, args.n, rng)
    out = Path(args.out_dir)
    table = spearman_table(per_sample)
    with job_manifest(args, "dirichlet") as manifest:
        manifest.write_parquet(per_sample, out / "per_sample.parquet")
        manifest.write_parquet(table, out / "spearman.parquet")
        manifest.write_text(
            "<h3>Spearman correlation of the confusion index and normalised entropy</h3>"
            + table.to_html(index=False, float_format="%.3f"), out / "spearman.html")
        drawn = {"class_densities": (dirichlet_class_densities, probs),
                 "h_ci_densities": (dirichlet_h_ci_densities, per_sample),
                 "ci_vs_h": (dirichlet_ci_vs_h, per_sample)}
        for name in FIGURES["dirichlet_simulation"]:
            draw, data = drawn[name]
            paths = [out / f"{name}.{e}" for e in FORMATS]
            draw(data, paths, cases)
            for path in paths:
                manifest.record(path)
    logging.getLogger("modelvar.simulation.dirichlet").info("%s", table.to_string(index=False))
    return 0

