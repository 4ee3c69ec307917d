"""The ``design`` job: one dataset's design, as the plan fits it, written where the figures and
findings jobs read it (:mod:`modelvar.study.design`)."""

from __future__ import annotations

import argparse

from modelvar.jobs.common import add_manifest, job_manifest

#: the command (modelvar.jobs: its help texts are no part of the code version)
NOT_RESULTS = ("help", "description", "metavar")
COMMAND = dict(
    name="design",
    help="(job) one dataset's design, as the plan fits it",
    description=("Write one dataset's design (per classifier: its cells, each cell's roles, the "
                 "families collapsed for it), decided by the plan, to the file the figures and "
                 "findings jobs read."),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_manifest(p)
    p.add_argument("--design", required=True,
                   help="the dataset's design as JSON (modelvar.study.design.DatasetDesign)")
    p.add_argument("--out", required=True, help="JSON file to write")


def run(args: argparse.Namespace) -> int:
    from modelvar.study.design import DatasetDesign

    design = DatasetDesign.from_json(args.design)  # refuses a malformed design
    with job_manifest(args, "design", dataset=design.dataset) as manifest:
        manifest.write_text(design.to_json(), args.out)
    return 0
