"""The ``dataset-overview`` job: the report's page of the study's datasets."""

from __future__ import annotations

import argparse

from modelvar.jobs.common import add_manifest, job_manifest, read_json

#: the command (modelvar.jobs: its help texts are no part of the code version)
NOT_RESULTS = ("help", "description", "metavar")
COMMAND = dict(
    name="dataset-overview",
    help="(job) the report's page of the study's datasets",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_manifest(p)
    p.add_argument("--meta", nargs="+", required=True, help="prepared datasets' JSON metadata")
    p.add_argument("--out", required=True, help="HTML file to write")


def run(args: argparse.Namespace) -> int:
    from modelvar.pipeline.dataset_overview import overview_html

    metas = [read_json(p) for p in args.meta]
    with job_manifest(args, "dataset-overview") as manifest:
        manifest.write_text(overview_html(metas), args.out)
    return 0

