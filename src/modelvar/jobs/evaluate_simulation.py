"""The ``evaluate-simulation`` job: the metric study's criteria, ranking and figures."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from modelvar.jobs.common import add_drawing, add_manifest, job_manifest, read_tables

#: the command (modelvar.jobs: its help texts are no part of the code version)
NOT_RESULTS = ("help", "description", "metavar")
COMMAND = dict(
    name="evaluate-simulation",
    help="(job) score every pairwise metric on the seed's criteria (seed 000)",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_manifest(p)
    add_drawing(p)
    p.add_argument("--sims", nargs="+", required=True, help="tables of the simulate command")
    p.add_argument("--out-dir", required=True, help="where the tables and figures go")


def run(args: argparse.Namespace) -> int:
    from modelvar.metrics.pairwise import ALL_METRICS
    from modelvar.plots.common import set_width
    from modelvar.plots.simulation import metric_by_distribution, metric_vs_accuracy
    from modelvar.simulation import FIGURES
    from modelvar.simulation.metric_study import best_per_criterion, evaluate
    from modelvar.study.figures import FORMATS

    set_width(args.width)

    sims = read_tables(args.sims)
    sims.insert(0, "simulation", range(len(sims)))
    out = Path(args.out_dir)
    metrics = list(ALL_METRICS)
    tidy = sims.melt(id_vars=[c for c in sims.columns if c not in metrics],
                     value_vars=metrics, var_name="metric", value_name="value")
    criteria, ranking = evaluate(sims, metrics)
    best = best_per_criterion(criteria)
    with job_manifest(args, "evaluate-simulation") as manifest:
        manifest.write_parquet(tidy, out / "simulations.parquet")
        manifest.write_parquet(criteria, out / "criteria.parquet")
        manifest.write_parquet(ranking, out / "ranking.parquet")
        html = ["<h3>Reproducibility metrics scored on the seed's criteria</h3>",
                f"<p>{len(sims)} simulations. Best per criterion: "
                + "; ".join(f"<b>{k}</b>: {', '.join(v)}" for k, v in best.items()) + "</p>",
                ranking.to_html(index=False, float_format="%.2f"),
                "<h4>Criterion values</h4>", criteria.to_html(index=False, float_format="%.3f")]
        manifest.write_text("\n".join(html), out / "ranking.html")
        drawn = {"metric_vs_accuracy": metric_vs_accuracy,
                 "metric_by_distribution": metric_by_distribution}
        for name in FIGURES["evaluate_simulation"]:
            draw = drawn[name]
            paths = [out / f"{name}.{e}" for e in FORMATS]
            draw(sims, metrics, paths)
            for path in paths:
                manifest.record(path)
    logging.getLogger("modelvar.simulate").info("best per criterion: %s", best)
    return 0

