"""The ``figures`` job: one dataset's figure set (or its group-disparities figure): the figures
and the tables they read from the figure registry (:mod:`modelvar.study.figures`), each drawn by
the function of its name in :mod:`modelvar.plots.study`."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from modelvar.jobs.common import add_drawing, add_manifest, job_manifest
from modelvar.study.figures import FORMATS as FIGURE_FORMATS

#: the command (modelvar.jobs: its help texts are no part of the code version)
NOT_RESULTS = ("help", "description", "metavar")
COMMAND = dict(
    name="figures",
    help="(job) the figure set of one dataset",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_manifest(p)
    add_drawing(p)
    p.add_argument("--dataset", required=True, help="the dataset")
    for name in ("summary", "agreement", "runs"):
        p.add_argument(f"--{name}", nargs="+", metavar="TABLE",
                       help=f"the dataset's {name} tables")
    p.add_argument("--disparities", nargs="+", metavar="TABLE",
                   help="the dataset's disparities tables; without --figures, draw only the "
                   "group-disparity figure")
    p.add_argument("--design-file", required=True,
                   help="the dataset's design (the design job's file: each classifier's cells "
                   "and their roles)")
    p.add_argument("--design", choices=("factorial", "one-at-a-time", "both"), default="both",
                   help="the config's design")
    p.add_argument("--figures", nargs="+", metavar="NAME",
                   help="draw only these (default: every figure the design has cells for)")
    p.add_argument("--out-dir", required=True, help="where the figures go")
    p.add_argument("--formats", nargs="+", default=list(FIGURE_FORMATS),
                   help="file formats (the picture first)")


def run(args: argparse.Namespace) -> int:
    from modelvar.pipeline.result_tables import in_study_order, read_tables
    from modelvar.plots import study as draw
    from modelvar.plots.common import set_colours, set_width
    from modelvar.study import figures as registry
    from modelvar.study.design import DatasetDesign

    set_width(args.width)
    set_colours(json.loads(args.colours))

    out_dir = Path(args.out_dir)
    roles = DatasetDesign.from_json(Path(args.design_file).read_text()).roles()
    log = logging.getLogger("modelvar.figures")
    given = {t: getattr(args, t) for t in registry.TABLES}
    if args.figures:
        names = args.figures
    elif args.disparities:
        names = [f.name for f in registry.DATASET_FIGURES if f.part == "grouped"]
    else:
        names = registry.figures_of_design(args.design)
    specs = [registry.figure(name) for name in names]
    needed = registry.tables_of(names)
    missing = [t for t in needed if not given[t]]
    if missing:
        raise ValueError(f"figures: missing --{', --'.join(missing)}")
    frames = {t: in_study_order(read_tables(given[t])) for t in needed}
    with job_manifest(args, "figures", dataset=args.dataset, figures=names) as manifest:
        for spec in specs:
            paths = [out_dir / f"{spec.name}.{ext}" for ext in args.formats]
            getattr(draw, spec.name)(*(frames[t] for t in spec.tables), roles, args.dataset,
                                     paths)
            for path in paths:
                manifest.record(path)
            log.info("%s: %s done", args.dataset, spec.name)
    return 0
