"""The ``grouped`` job: metrics and reproducibility by group, per repeat."""

from __future__ import annotations

import argparse
import json

from modelvar.jobs.common import read_json
from modelvar.jobs.metrics_job import metrics_job_run


def run(args: argparse.Namespace) -> int:
    from modelvar.pipeline.grouped_tables import grouped_job
    from modelvar.pipeline.result_tables import GROUPED_TABLES

    meta = read_json(args.meta)
    return metrics_job_run(args, "grouped", GROUPED_TABLES, lambda tables, manifest: (
        grouped_job(args.predictions, args.data, meta, tables,
                    groupings=json.loads(args.groupings), metrics=args.metrics,
                    ec_local_undefined=args.ec_local_undefined, manifest=manifest)))

