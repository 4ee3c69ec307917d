"""The ``design`` job: one dataset's design, as the plan fits it, written where the figures and
findings jobs read it (:mod:`modelvar.study.design`)."""

from __future__ import annotations

import argparse

from modelvar.jobs.common import job_manifest


def run(args: argparse.Namespace) -> int:
    from modelvar.study.design import DatasetDesign

    design = DatasetDesign.from_json(args.design)  # refuses a malformed design
    with job_manifest(args, "design", dataset=design.dataset) as manifest:
        manifest.write_text(design.to_json(), args.out)
    return 0
