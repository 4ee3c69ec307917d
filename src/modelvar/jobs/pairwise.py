"""The ``pairwise`` job: the metric tables of a group of fit jobs' predictions."""

from __future__ import annotations

import argparse

from modelvar.jobs.common import read_json
from modelvar.jobs.metrics_job import metrics_job_run


def run(args: argparse.Namespace) -> int:
    from modelvar.pipeline.metric_tables import TABLES, metrics_job

    classes = read_json(args.meta)["classes"]
    return metrics_job_run(args, "pairwise", TABLES, lambda tables, manifest: (
        metrics_job(args.predictions, tables, classes=classes,
                    ec_local_undefined=args.ec_local_undefined, manifest=manifest)))

