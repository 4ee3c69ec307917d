"""The ``findings`` job: the study's findings, figures and page from its aggregated tables."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from modelvar.jobs.common import add_drawing, add_manifest, job_manifest, read_json

#: the command (modelvar.jobs: its help texts are no part of the code version)
NOT_RESULTS = ("help", "description", "metavar")
COMMAND = dict(
    name="findings",
    help="(job) the study's findings from its aggregated tables",
    description=("Sources of variance (each source alone against the control), variance "
                 "components over the factorial grid, seed 004's claims checked, the report's "
                 "Findings page and each dataset's summary page, from the summary, agreement and "
                 "runs tables (never the predictions)."),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_manifest(p)
    add_drawing(p)
    for name in ("summary", "agreement", "runs"):
        p.add_argument(f"--{name}", nargs="+", required=True, metavar="TABLE",
                       help=f"every {name} table of the study")
    p.add_argument("--meta", nargs="+", required=True, help="every dataset's JSON metadata")
    p.add_argument("--design-files", nargs="+", required=True,
                   help="every dataset's design (the design jobs' files)")
    p.add_argument("--perturbation", required=True,
                   help="the config's perturbation section as JSON (which figures are drawn)")
    p.add_argument("--design", choices=("factorial", "one-at-a-time", "both"), default="both",
                   help="the config's design")
    p.add_argument("--warn-changed-below", type=float, required=True,
                   help="share of changed cells below which a data perturbation is too weak to "
                   "judge its source (the config's perturbation.warn_changed_below)")
    p.add_argument("--equivalence-ratio", type=float, required=True,
                   help="the equivalence margin of a ratio of two measures (the config's "
                   "findings.equivalence_ratio)")
    p.add_argument("--sequential", default="",
                   help="a sequential study's looks and state as JSON (the workflow's, from "
                   "its rounds file); empty for fixed repeats")
    p.add_argument("--results", required=True, help="the study's results folder")


def run(args: argparse.Namespace) -> int:
    from modelvar.findings.figures import findings_figures
    from modelvar.findings.kinds import kinds
    from modelvar.findings.study import compute_findings, write_findings
    from modelvar.plots.common import set_colours, set_width
    from modelvar.plots.findings import (
        accuracy_vs_reproducibility,
        caption,
        comparison_figure,
        dose_response_figure,
        sources_figure,
    )
    from modelvar.plots.verdicts import verdict_caption, verdict_figure
    from modelvar.study.design import read_designs, study_roles
    from modelvar.study.figures import FORMATS
    from modelvar.study.rounds import Rounds

    set_width(args.width)
    set_colours(json.loads(args.colours))

    metas = {}
    for path in args.meta:
        meta = read_json(path)
        metas[meta["name"]] = meta
    perturbation = json.loads(args.perturbation)
    designs = read_designs(args.design_files)
    roles = study_roles(designs)
    collapsed = {(name, clf): list(d.collapsed) for name, design in designs.items()
                 for clf, d in design.classifiers.items()}
    findings = compute_findings(
        summary_paths=args.summary, agreement_paths=args.agreement, runs_paths=args.runs,
        metas=metas, roles=roles, collapsed=collapsed, weak_below=args.warn_changed_below,
        margin=args.equivalence_ratio,
        sequential=Rounds.from_json(args.sequential) if args.sequential else None)
    tables = findings.tables
    # each figure of findings.figures.findings_figures (what the workflow's rule declares): its
    # title on the Findings page, how it is drawn and its caption (plots.findings.caption unless
    # given: a kind of claim's, plots.verdicts.verdict_caption)
    draw = {
        "sources_of_variance": (
            "Sources of variance, each alone against the control",
            lambda paths: sources_figure(tables["sources"], paths,
                                         leaders=tables["margins"])),
        "accuracy_vs_reproducibility": (
            "Accuracy and reproducibility, per dataset and classifier",
            lambda paths: accuracy_vs_reproducibility(findings.summary, findings.roles, paths)),
        "classifier_comparison": (
            "Classifiers compared, each source alone",
            lambda paths: comparison_figure(tables["comparison"], tables["study_comparison"],
                                            paths, verdicts=tables["verdicts"])),
        "dose_response": (
            "Dose-response: each source against its strength",
            lambda paths: dose_response_figure(tables["dose_response"], paths)),
    }
    for kind in kinds():  # each kind of claim drawn: its table, its claims' verdicts
        if kind.drawn is not None:
            draw[kind.figure] = (
                kind.title[0].upper() + kind.title[1:],
                lambda paths, kind=kind: verdict_figure(kind, tables[kind.table],
                                                        tables["verdicts"], paths),
                lambda kind=kind: verdict_caption(kind, tables[kind.table],
                                                  tables["verdicts"]))
    classifiers = [clf for clf in designs[next(iter(designs))].classifiers]
    out = Path(args.results) / "findings"
    figures, captions = {}, {}
    with job_manifest(args, "findings") as manifest:
        for name in findings_figures(args.design, classifiers, perturbation,
                                     datasets=len(metas)):
            title, function, *said = draw[name]
            paths = [out / f"{name}.{ext}" for ext in FORMATS]
            marks = function(paths)
            for path in paths:
                manifest.record(path)
            if marks is not None and marks.empty:  # nothing to draw (it says so): not shown
                continue
            figures[title] = paths[0]
            captions[title] = said[0]() if said else caption(name, tables["sources"])
        write_findings(findings, args.results, figures, manifest, captions)
    logging.getLogger("modelvar.findings").info(
        "%s", ", ".join(f"{name}: {len(t)} rows" for name, t in findings.tables.items()))
    return 0

