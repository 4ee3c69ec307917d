"""The ``pairwise`` job: the metric tables of a group of fit jobs' predictions."""

from __future__ import annotations

import argparse

from modelvar.jobs.common import add_ec_local, add_manifest, read_json
from modelvar.jobs.metrics_job import add_metrics_job_arguments, metrics_job_run

#: the command (modelvar.jobs: its help texts are no part of the code version)
NOT_RESULTS = ("help", "description", "metavar")
COMMAND = dict(
    name="pairwise",
    help="(job) metric tables of a group of fit jobs' predictions",
    description=("Read the predictions one repeat at a time and write the pairwise, summary, "
                 "per_run, agreement and per_sample tables to "
                 "RESULTS/aggregated/TABLE/dataset=D/classifier=K/JOB.parquet."),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_manifest(p)
    add_metrics_job_arguments(p)
    add_ec_local(p)


def run(args: argparse.Namespace) -> int:
    from modelvar.pipeline.metric_tables import TABLES, metrics_job

    classes = read_json(args.meta)["classes"]
    return metrics_job_run(args, "pairwise", TABLES, lambda tables, manifest: (
        metrics_job(args.predictions, tables, classes=classes,
                    ec_local_undefined=args.ec_local_undefined, manifest=manifest)))

