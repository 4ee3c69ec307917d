"""The findings job: the study's answer, from its aggregated tables.

Reads the summary, agreement and runs tables of every dataset (only the columns and rows it
needs, file by file, so that the full study's tables fit in memory: the predictions are never
read), works out each dataset's design (which cells are the factorial grid and which the
one-at-a-time cells, :func:`modelvar.study.design.cell_roles`), and writes

* ``aggregated/study/{sources,study_sources,margins,comparison,study_comparison,dose_response,
  dose_summary,components,study_components,claims,strength}.parquet`` (docs/results.md);
* ``findings/findings.html`` (the report's Findings page) with the headline figures
  ``findings/sources_of_variance.{png,pdf}`` and ``findings/accuracy_vs_reproducibility.{png,pdf}``;
* ``DATASET/summary.html`` per dataset: every cell's accuracy, SD, global EC and agreement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from modelvar.findings.claims import check_claims
from modelvar.findings.comparison import (
    classifier_comparison,
    leader_margins,
    study_comparison,
)
from modelvar.findings.components import grid_components, study_components
from modelvar.findings.dose import dose_response, dose_summary
from modelvar.findings.report import answer_rst, dataset_summary_html, findings_html
from modelvar.findings.sources import sources_of_variance, study_sources
from modelvar.pipeline.result_tables import read_tables, study_table_path
from modelvar.study import families
from modelvar.study.design import cell_roles, collapsed_families, reach_of

SUMMARY_METRICS = ("accuracy", "churn", "ec_global", "ec_local", "kappa", "pa")
AGREEMENT_COLUMNS = ["cell", "repeat", "all_runs_identical", "unstable_frac", "n", "bias_01",
                     "variance_01"]


def summary_columns() -> list[str]:
    """What the findings read of the summary tables: every family's level column too."""
    return ["cell", "repeat", "subset", "metric", "mean", "sd", "null_mean", *families.names()]


def runs_columns() -> list[str]:
    """What the findings read of the runs tables: every summarised realised strength and
    every family's level column too."""
    strengths = [s.column for _, s in families.strengths() if s.sources or s.strength]
    return ["cell", "repeat", "run", "accuracy", *strengths, *families.names(), "device",
            "platform", "versions"]


STUDY_TABLES = ("sources", "study_sources", "margins", "comparison", "study_comparison",
                "dose_response", "dose_summary", "components", "study_components", "claims",
                "strength")


def read_summaries(paths: Sequence[str | Path]) -> pd.DataFrame:
    """The full-test-set rows of the findings' metrics, file by file."""
    parts = []
    for path in paths:
        frame = read_tables([path], columns=summary_columns())
        parts.append(frame[(frame["subset"] == "all") & frame["metric"].isin(SUMMARY_METRICS)])
    return pd.concat(parts, ignore_index=True)


def realised_strength(runs: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and level of a training-rows family (not its control): the mean realised
    strength over every run of every cell with that level, one column per strength number
    the families declare for this table (NaN for other families' levels)."""
    rows = []
    shown = [(f, s) for f, s in families.strengths() if s.strength]
    for family in families.training_rows_families():
        active = runs[runs[family.name] != family.none_id]
        for (dataset, level), part in active.groupby(["dataset", family.name], sort=True,
                                                     observed=True):
            row = {"dataset": dataset, "level": family.level_label(str(level)),
                   "runs": len(part)}
            for owner, strength in shown:
                row[strength.strength] = float(part[strength.column].mean()) \
                    if owner is family else float("nan")
            rows.append(row)
    return pd.DataFrame(rows)


@dataclass
class Findings:
    """The findings' tables, and what the figures and pages need besides them."""

    tables: dict[str, pd.DataFrame]
    notes: list[str]
    summary: pd.DataFrame
    agreement: pd.DataFrame
    roles: dict[str, dict[str, tuple]]
    platforms: pd.DataFrame


def platforms(runs: pd.DataFrame) -> pd.DataFrame:
    """Where the runs ran (docs/decisions.md, "Determinism"): per classifier, each distinct
    device, machine, CPU, BLAS kernel, threads, torch CPU capability and library versions,
    with its number of runs."""
    import json

    rows = []
    keys = ["classifier", "device", "platform", "versions"]
    for (classifier, device, platform, versions), part in runs.groupby(keys, observed=True):
        where, libs = json.loads(platform), json.loads(versions)
        rows.append({
            "classifier": classifier, "device": device,
            "machine": f"{where.get('machine', '?')}, {where.get('cpu', '?')}",
            "BLAS": "; ".join(where.get("blas", [])) or "–",
            "threads": where.get("threads"),
            "torch CPU": where.get("torch_cpu_capability", "–"),
            "versions": ", ".join(f"{k} {v}" for k, v in sorted(libs.items())),
            "runs": len(part)})
    return pd.DataFrame(rows)


def compute_findings(*, summary_paths, agreement_paths, runs_paths, metas: dict[str, dict],
                     perturbation: dict, design: str, root_seed: int, n_boot: int,
                     weak_below: float) -> Findings:
    """The study tables (module docstring) from the aggregated tables' files: ``n_boot``
    bootstrap resamples for the variance shares (config ``findings.bootstrap``), ``weak_below``
    the share of changed cells under which a data perturbation is too weak to judge its source
    (config ``perturbation.warn_changed_below``)."""
    summary = read_summaries(summary_paths)
    agreement = read_tables(agreement_paths, columns=AGREEMENT_COLUMNS)
    runs = read_tables(runs_paths, columns=runs_columns())
    roles = {name: cell_roles(perturbation, design, reach_of(meta))
             for name, meta in metas.items()}
    sources = sources_of_variance(summary, agreement, runs, roles)
    sources["weak"] = (sources["source"] == "data") & (
        sources["data_changed_frac"] < weak_below) if "data_changed_frac" in sources else False
    components = grid_components(runs, summary, roles, root_seed=root_seed, n_boot=n_boot)
    notes = []
    for name, meta in metas.items():
        for family in collapsed_families(perturbation, reach_of(meta)):
            what = families.family(family).reach
            notes.append(f"{name} has no {what} features: its {family} perturbation levels "
                         "collapse to none (no duplicate cells were fitted).")
    comparison = classifier_comparison(sources, summary)
    dose = dose_response(sources)
    tables = {"sources": sources, "study_sources": study_sources(sources),
              "comparison": comparison, "study_comparison": study_comparison(comparison),
              "margins": leader_margins(sources, summary),
              "dose_response": dose, "dose_summary": dose_summary(dose),
              "components": components,
              "study_components": study_components(components) if not components.empty
              else pd.DataFrame(), "claims": check_claims(
                  sources, summary,
                  weak_below=weak_below),
              "strength": realised_strength(runs)}
    notes += adequacy_notes(components)
    return Findings(tables, notes, summary, agreement, roles, platforms(runs))


#: an interval of a variance share wider than this says little (shares lie in [0, 1])
UNINFORMATIVE_WIDTH = 0.3


def adequacy_notes(components: pd.DataFrame) -> list[str]:
    """Where the variance shares' intervals are too wide to read (wider than
    :data:`UNINFORMATIVE_WIDTH`): per dataset × classifier, the widest and roughly how many
    repeats would narrow it to that width (intervals narrow as 1/√repeats: R · (w / w₀)²)."""
    out = []
    if components.empty:
        return out
    widths = components.assign(width=components["share_high"] - components["share_low"])
    for (dataset, classifier), part in widths.groupby(["dataset", "classifier"], sort=False):
        widest = part.loc[part["width"].idxmax()] if part["width"].notna().any() else None
        if widest is None or widest["width"] <= UNINFORMATIVE_WIDTH:
            continue
        repeats = int(widest["repeats"])
        needed = int(np.ceil(repeats * (widest["width"] / UNINFORMATIVE_WIDTH) ** 2))
        out.append(
            f"{dataset}, {classifier}: with {repeats} repeats the variance shares' intervals "
            f"are too wide to read (the share of {widest['component']} "
            f"{widest['share']:.3f} [{widest['share_low']:.3f}, {widest['share_high']:.3f}]); "
            f"about {needed} repeats would narrow them to {UNINFORMATIVE_WIDTH:g}.")
    return out


def write_findings(findings: Findings, results: str | Path, figures: dict[str, Path],
                   manifest) -> None:
    """The study tables, the Findings page (with the given figures embedded), every dataset's
    summary page, and the top of the report's first screen (``findings/answer.rst``:
    :func:`~modelvar.findings.report.answer_rst`, the first of ``figures`` as the headline)."""
    results = Path(results)
    t = findings.tables
    manifest.write_text(answer_rst(t["sources"], t["components"],
                                   next(iter(figures.values()), None), t["margins"]),
                        results / "findings" / "answer.rst")
    for name, table in t.items():
        manifest.write_parquet(table, study_table_path(results, name))
    manifest.write_text(findings_html(t["sources"], t["study_sources"], t["components"],
                                      t["study_components"], t["claims"], notes=findings.notes,
                                      strength=t["strength"], figures=figures,
                                      platforms=findings.platforms,
                                      comparison=(t["comparison"], t["study_comparison"]),
                                      margins=t["margins"], dose=t["dose_summary"]),
                        results / "findings" / "findings.html")
    for name, roles in findings.roles.items():
        summary = findings.summary[findings.summary["dataset"] == name]
        agreement = findings.agreement[findings.agreement["dataset"] == name]
        manifest.write_text(dataset_summary_html(name, summary, agreement, roles),
                            results / name / "summary.html")
