"""The ``findings`` job: the study's findings, figures and page from its aggregated tables."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from modelvar.jobs.common import job_manifest, read_json


def run(args: argparse.Namespace) -> int:
    from modelvar.findings.study import compute_findings, write_findings
    from modelvar.plots.findings import (
        accuracy_vs_reproducibility,
        comparison_figure,
        dose_response_figure,
        sources_figure,
    )

    metas = {}
    for path in args.meta:
        meta = read_json(path)
        metas[meta["name"]] = meta
    findings = compute_findings(
        summary_paths=args.summary, agreement_paths=args.agreement, runs_paths=args.runs,
        metas=metas, perturbation=json.loads(args.perturbation), design=args.design,
        root_seed=args.root_seed, n_boot=args.boot)
    out = Path(args.results) / "findings"
    figures = {}
    with job_manifest(args, "findings") as manifest:
        if not findings.tables["sources"].empty:
            paths = [out / f"sources_of_variance.{ext}" for ext in ("png", "pdf")]
            sources_figure(findings.tables["sources"], findings.tables["study_sources"], paths)
            figures["Sources of variance, each alone against the control"] = paths[0]
        paths = [out / f"accuracy_vs_reproducibility.{ext}" for ext in ("png", "pdf")]
        accuracy_vs_reproducibility(findings.summary, findings.roles, paths)
        figures["Accuracy and reproducibility, per dataset and classifier"] = paths[0]
        sources = findings.tables["sources"]
        if not sources.empty and sources["classifier"].nunique() > 1:
            paths = [out / f"classifier_comparison.{ext}" for ext in ("png", "pdf")]
            comparison_figure(findings.tables["comparison"],
                              findings.tables["study_comparison"], paths)
            figures["Classifiers compared, each source alone"] = paths[0]
        if args.dose_figure == "yes":
            paths = [out / f"dose_response.{ext}" for ext in ("png", "pdf")]
            dose_response_figure(findings.tables["dose_response"], paths)
            figures["Dose-response: each source against its strength"] = paths[0]
        for path in sorted(out.glob("*.p[nd][gf]")):
            manifest.record(path)
        write_findings(findings, args.results, figures, manifest)
    logging.getLogger("modelvar.findings").info(
        "%s", ", ".join(f"{name}: {len(t)} rows" for name, t in findings.tables.items()))
    return 0

