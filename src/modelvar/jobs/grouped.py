"""The ``grouped`` job: metrics and reproducibility by group, per repeat."""

from __future__ import annotations

import argparse
import json

from modelvar.jobs.common import add_ec_local, add_manifest, read_json
from modelvar.jobs.metrics_job import add_metrics_job_arguments, metrics_job_run

#: the command (modelvar.jobs: its help texts are no part of the code version)
NOT_RESULTS = ("help", "description", "metavar")
COMMAND = dict(
    name="grouped",
    help="(job) metrics and reproducibility by group, per repeat",
    description=("Read the predictions one repeat at a time and write the grouped and disparities"
                 " tables to RESULTS/aggregated/TABLE/dataset=D/classifier=K/JOB.parquet."),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_manifest(p)
    add_metrics_job_arguments(p)
    p.add_argument("--data", required=True, help="canonical dataset parquet (grouping columns)")
    p.add_argument("--groupings", required=True,
                   help='JSON list: column names, "@class", or lists of them (intersections)')
    p.add_argument("--metrics", nargs="+", default=["ec_global", "pa"],
                   help="pairwise metrics computed by group")
    add_ec_local(p)


def run(args: argparse.Namespace) -> int:
    from modelvar.pipeline.grouped_tables import grouped_job
    from modelvar.pipeline.result_tables import GROUPED_TABLES

    meta = read_json(args.meta)
    return metrics_job_run(args, "grouped", GROUPED_TABLES, lambda tables, manifest: (
        grouped_job(args.predictions, args.data, meta, tables,
                    groupings=json.loads(args.groupings), metrics=args.metrics,
                    ec_local_undefined=args.ec_local_undefined, manifest=manifest)))

