"""The ``figures`` job: one dataset's figure set (or its group-disparities figure)."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from modelvar.jobs.common import read_json


def run(args: argparse.Namespace) -> int:
    from modelvar.pipeline.design import cell_roles, reach_of
    from modelvar.pipeline.result_tables import read_tables
    from modelvar.plots.study import FIGURE_FUNCTIONS, figures_of_design, group_disparities

    out_dir = Path(args.out_dir)
    roles = cell_roles(json.loads(args.perturbation), args.design,
                       reach_of(read_json(args.meta)))
    log = logging.getLogger("modelvar.figures")
    if args.disparities:
        group_disparities(read_tables(args.disparities), roles, args.dataset,
                          [out_dir / f"group_disparities.{ext}" for ext in args.formats])
        return 0
    given = {"summary": args.summary, "agreement": args.agreement, "runs": args.runs}
    names = args.figures or figures_of_design(args.design)
    unknown = sorted(set(names) - set(FIGURE_FUNCTIONS))
    if unknown:
        raise ValueError(f"figures: unknown figure(s) {unknown}; known: {list(FIGURE_FUNCTIONS)}")
    needed = sorted({t for name in names for t in FIGURE_FUNCTIONS[name][0]})
    missing = [t for t in needed if not given[t]]
    if missing:
        raise ValueError(f"figures: missing --{', --'.join(missing)}")
    frames = {t: read_tables(given[t]) for t in needed}
    for name in names:
        tables, func = FIGURE_FUNCTIONS[name]
        func(*(frames[t] for t in tables), roles, args.dataset,
             [out_dir / f"{name}.{ext}" for ext in args.formats])
        log.info("%s: %s done", args.dataset, name)
    return 0

