"""The ``dataset-overview`` job: the report's page of the study's datasets."""

from __future__ import annotations

import argparse

from modelvar.jobs.common import job_manifest, read_json


def run(args: argparse.Namespace) -> int:
    from modelvar.pipeline.dataset_overview import overview_html

    metas = [read_json(p) for p in args.meta]
    with job_manifest(args, "dataset-overview") as manifest:
        manifest.write_text(overview_html(metas), args.out)
    return 0

