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

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from modelvar.findings.components import MIN_CLUSTERS, grid_components
from modelvar.findings.dose import dose_response, dose_summary
from modelvar.findings.judging import Multiplicity, judge_claims
from modelvar.findings.kinds import Context
from modelvar.findings.paired import (
    EQUIVALENCE_RATIO,
    MIN_FOR_INTERVAL,
    per_repeat,
    with_ci,
)
from modelvar.findings.report import (
    answer_rst,
    claim_sentences,
    dataset_summary_html,
    findings_html,
    multiplicity_line,
)
from modelvar.findings.sequential import (
    at_look,
    method_line,
    sequential_status,
    sequential_verdicts,
)
from modelvar.findings.sources import sources_of_variance, study_sources
from modelvar.pipeline.result_tables import read_tables, study_table_path
from modelvar.study import families
from modelvar.study.rounds import Rounds
from modelvar.study.stopping import BLOCK_COLUMNS

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
    return ["cell", "repeat", "run", "accuracy", *strengths, *families.names(), "hparams",
            "device", "platform", "versions"]


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


def hparam_strength(runs: pd.DataFrame) -> pd.DataFrame:
    """Per dataset × classifier × hparam level alone or in the grid (not its control): what the
    level really did to the hyperparameters, against the base values of the classifier's
    control runs: the largest relative change of a numeric hyperparameter over its runs
    (``max_relative_change``), and a ``note`` where the change is of another kind than its name
    says — a hyperparameter that left 0 (a relative perturbation of 0 moves it by a share of its
    range: :mod:`modelvar.models.hparams`) or a categorical one that changed (a penalty switched
    off), with the share of runs in which it did."""

    family = families.family("hparam")
    rows = []
    for (dataset, classifier), part in runs.groupby(["dataset", "classifier"], sort=True,
                                                    observed=True):
        control = part[part["hparam"] == family.none_id]
        if control.empty:
            continue
        base = json.loads(control["hparams"].iloc[0])
        for level, fits in part[part["hparam"] != family.none_id].groupby("hparam", sort=True,
                                                                          observed=True):
            realised = [json.loads(h) for h in fits["hparams"]]
            left_zero, switched, largest = {}, {}, 0.0
            for values in realised:
                for name, before in base.items():
                    after = values.get(name, before)
                    if isinstance(before, bool) or not isinstance(before, int | float):
                        switched[name] = switched.get(name, 0) + (after != before)
                    elif before == 0:
                        left_zero[name] = left_zero.get(name, 0) + (after != 0)
                    else:
                        largest = max(largest, abs(after - before) / abs(before))
            n = len(realised)
            note = "; ".join(
                [f"{name} left 0 in {k / n:.0%} of runs" for name, k in left_zero.items() if k]
                + [f"{name} changed in {k / n:.0%} of runs" for name, k in switched.items() if k])
            rows.append({"dataset": dataset, "classifier": classifier,
                         "level": family.level_label(str(level)), "runs": n,
                         "max_relative_change": largest, "note": note})
    return pd.DataFrame(rows, columns=["dataset", "classifier", "level", "runs",
                                       "max_relative_change", "note"])


@dataclass
class Findings:
    """The findings' tables, and what the figures and pages need besides them."""

    tables: dict[str, pd.DataFrame]
    notes: list[str]
    summary: pd.DataFrame
    agreement: pd.DataFrame
    roles: dict[tuple[str, str], dict[str, tuple]]
    platforms: pd.DataFrame
    multiplicity: Multiplicity
    #: what limits the findings' statements (too few repeats, runs, test rows), said first
    adequacy: list[str]


def platforms(runs: pd.DataFrame) -> pd.DataFrame:
    """Where the runs ran (docs/decisions.md, "Determinism"): per classifier, each distinct
    device, machine, CPU, BLAS kernel, threads, torch CPU capability and library versions,
    with its number of runs."""

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


@dataclass
class Judged:
    """What the page states, judged (:func:`judge_study`): the tables and the control."""

    tables: dict[str, pd.DataFrame]
    multiplicity: Multiplicity
    notes: list[str]
    #: what the claims were judged from (:class:`modelvar.findings.kinds.Context`)
    context: Context | None = None


def judge_study(summary: pd.DataFrame, agreement: pd.DataFrame, runs: pd.DataFrame,
                roles: dict[tuple[str, str], dict[str, tuple]], *, weak_below: float,
                margin: float = EQUIVALENCE_RATIO) -> Judged:
    """Every verdict of the page from the summary (full-test-set rows), agreement and runs
    tables (runs: ``cell``, ``repeat``, ``accuracy``, the family level columns and the realised
    strength columns): the sources table, the variance components, and the claims under the
    page's two tiers (:func:`judge`). ``weak_below``: the share of changed cells under
    which a data perturbation is too weak to judge its source (config
    ``perturbation.warn_changed_below``); ``margin``: the equivalence margin of a ratio
    (config ``findings.equivalence_ratio``)."""
    sources = sources_of_variance(summary, agreement, runs, roles)
    sources["weak"] = (sources["source"] == "data") & (
        sources["data_changed_frac"] < weak_below) if "data_changed_frac" in sources else False
    components, notes = grid_components(runs, summary, roles)
    context = Context(sources, summary, per_repeat(summary), components, weak_below, margin)
    judged, control = judge_claims(context)
    return Judged({"sources": sources, **judged}, control, notes, context)


def judge_sequential(summary: pd.DataFrame, agreement: pd.DataFrame, runs: pd.DataFrame,
                     roles: dict[tuple[str, str], dict[str, tuple]], rounds: Rounds,
                     *, weak_below: float, margin: float = EQUIVALENCE_RATIO) -> Judged:
    """:func:`judge_study` of a sequential study: the claims judged at every look each block
    had (its first n repeats), then on all its repeats, each claim on its sequential p-value
    (:func:`modelvar.findings.sequential.sequential_verdicts`); the ``blocks`` table says
    which blocks stay open (:func:`~modelvar.findings.sequential.sequential_status`);
    ``rounds``: the study's state as the round began (:meth:`~modelvar.study.rounds.Rounds.
    for_findings`)."""
    tables = {"summary": summary, "agreement": agreement, "runs": runs}
    looks = {}
    for n in sorted({n for b in rounds.blocks.values() for n in b.looks}):
        part = at_look(tables, rounds, n)
        looks[n] = judge_study(part["summary"], part["agreement"], part["runs"], roles,
                               weak_below=weak_below, margin=margin).tables
    final = judge_study(summary, agreement, runs, roles, weak_below=weak_below, margin=margin)
    t = final.tables
    t["verdicts"] = sequential_verdicts(looks, t, rounds.schedule, final.context)
    t["blocks"] = sequential_status(t["verdicts"], rounds)
    control = Multiplicity.of(t["verdicts"], note=method_line(rounds.schedule))
    return Judged(t, control, final.notes, final.context)


def compute_findings(*, summary_paths, agreement_paths, runs_paths, metas: dict[str, dict],
                     roles: dict[tuple[str, str], dict[str, tuple]],
                     collapsed: dict[tuple[str, str], list[str]], weak_below: float,
                     margin: float = EQUIVALENCE_RATIO,
                     sequential: Rounds | None = None) -> Findings:
    """The study tables (module docstring) from the aggregated tables' files and the study's
    design (``roles``: per dataset × classifier, cell id → its parts of the design;
    ``collapsed``: the families collapsed for each, :class:`~modelvar.study.design.
    StudyDesign`). Every claim the page states is judged under its tier's control
    (:func:`judge_study`; a sequential study's over its looks, :func:`judge_sequential`)."""
    summary = read_summaries(summary_paths)
    agreement = read_tables(agreement_paths, columns=AGREEMENT_COLUMNS)
    runs = read_tables(runs_paths, columns=runs_columns())
    if sequential is None:
        verdicts = judge_study(summary, agreement, runs, roles, weak_below=weak_below,
                               margin=margin)
    else:
        verdicts = judge_sequential(summary, agreement, runs, roles, sequential,
                                    weak_below=weak_below, margin=margin)
    t = verdicts.tables
    t.setdefault("blocks", pd.DataFrame(columns=BLOCK_COLUMNS))
    notes = collapsed_notes(collapsed, metas)
    dose = dose_response(t["sources"])
    strength = pd.concat([realised_strength(runs), hparam_strength(runs)], ignore_index=True)
    components = t["components"]
    tables = {**t, "study_sources": study_sources(t["sources"]), "dose_response": dose,
              "dose_summary": dose_summary(dose), "strength": strength}
    notes += verdicts.notes + adequacy_notes(components)
    return Findings(tables, notes, summary, agreement, roles, platforms(runs),
                    verdicts.multiplicity,
                    adequacy_lines(t["sources"], runs, agreement, components))


def collapsed_notes(collapsed: dict[tuple[str, str], list[str]],
                    metas: dict[str, dict]) -> list[str]:
    """Why a dataset or classifier has fewer cells than the config's grid: a family it cannot
    be perturbed by (the dataset lacks its feature type), or a model seed it does not take."""
    out = []
    said = set()
    for (dataset, classifier), names in collapsed.items():
        for family in names:
            reach = families.family(family).reach
            if reach is not None and (dataset, family) not in said and dataset in metas:
                said.add((dataset, family))
                out.append(f"{dataset} has no {reach} features: its {family} perturbation "
                           "levels collapse to none (no duplicate cells were fitted).")
            elif reach is None:
                out.append(f"{classifier} takes no model seed: on {dataset} its "
                           f"{families.family(family).title} levels collapse to the fixed "
                           "seed (no duplicate cells were fitted); its sources, combined row "
                           "and figures use those cells.")
    return out


def judge(sources: pd.DataFrame, summary: pd.DataFrame, components: pd.DataFrame,
          weak_below: float, margin: float = EQUIVALENCE_RATIO
          ) -> tuple[dict[str, pd.DataFrame], Multiplicity]:
    """Every kind's table (:mod:`modelvar.findings.kinds`) with its verdicts under the page's
    two tiers, and the ``verdicts`` table of every claim with a test, from the sources table,
    the summary's full-test-set rows and the variance components
    (:func:`modelvar.findings.judging.judge_claims`)."""
    return judge_claims(Context(sources, summary, per_repeat(summary), components, weak_below,
                                margin))


#: test sets smaller than this make a run's accuracy move in coarse steps (1/n_test)
SMALL_TEST_SET = 100
#: fewer runs than this a repeat make each within-repeat SD rest on a handful of values
FEW_RUNS = 5


def adequacy_lines(sources: pd.DataFrame, runs: pd.DataFrame, agreement: pd.DataFrame,
                   components: pd.DataFrame) -> list[str]:
    """One line on what the study's size allows, where it limits what can be said: repeats
    (intervals and tests over repeats need :data:`MIN_FOR_INTERVAL`, the variance shares'
    jackknife :data:`MIN_CLUSTERS`), runs per repeat and test rows."""
    if sources.empty:
        return []
    repeats = int(sources["repeats"].min())
    limits = []
    if repeats < MIN_FOR_INTERVAL:
        limits.append(f"{repeats} repeat{'s' * (repeats != 1)} per cell: too few for any "
                      f"interval or test over repeats (run ≥ {MIN_FOR_INTERVAL}), so the "
                      "sentences give estimates only and nothing is told apart")
    elif repeats < MIN_CLUSTERS and not components.empty:
        limits.append(f"{repeats} repeats per cell: the variance shares get no interval or "
                      f"ranking (their jackknife needs ≥ {MIN_CLUSTERS} repeats)")
    per_repeat = runs.groupby(["dataset", "classifier", "cell", "repeat"], observed=True).size()
    if len(per_repeat) and per_repeat.min() < FEW_RUNS:
        limits.append(f"{int(per_repeat.min())} runs per repeat: each run-to-run SD rests on "
                      f"that many values")
    if "n" in agreement and agreement["n"].notna().any():
        smallest = agreement.dropna(subset=["n"]).groupby("dataset", sort=True,
                                                          observed=True)["n"].min()
        small = smallest[smallest < SMALL_TEST_SET].sort_values(kind="stable")
        if len(small):
            where = ", ".join(f"{int(n)} rows on {d}" for d, n in small.items())
            steps = ", ".join(f"{1 / n:.3f}" for n in small)
            limits.append(f"test sets of {where}: a run's accuracy there moves in steps of "
                          f"{steps}" + (f" (the other datasets' test sets hold "
                                        f"{int(smallest.drop(small.index).min()):,} rows or "
                                        "more)" if len(small) < len(smallest) else ""))
    return [f"What this study can tell: {'; '.join(limits)}."] if limits else []


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
            f"{with_ci(widest['share'], widest['share_low'], widest['share_high'])}); "
            f"about {needed} repeats would narrow them to {UNINFORMATIVE_WIDTH:g}.")
    return out


def write_findings(findings: Findings, results: str | Path, figures: dict[str, Path],
                   manifest, captions: dict[str, str] | None = None) -> None:
    """The study tables, the Findings page (with the given figures embedded, title → path,
    each with its caption), every dataset's summary page, and the top of the report's first
    screen (``findings/answer.rst``: :func:`~modelvar.findings.report.answer_rst`, the first
    of ``figures`` as the headline)."""
    captions = captions or {}
    results = Path(results)
    t = findings.tables
    manifest.write_text(answer_rst(t["sources"], t["components"],
                                   next(iter(figures.values()), None), t["margins"],
                                   t["combined"], findings.adequacy, t["study_leaders"],
                                   multiplicity_line(findings.multiplicity),
                                   captions.get(next(iter(figures), ""))),
                        results / "findings" / "answer.rst")
    for name, table in t.items():
        manifest.write_parquet(table, study_table_path(results, name))
    manifest.write_text(findings_html(t["sources"], t["study_sources"], t["components"],
                                      t["study_components"], t["claims"], notes=findings.notes,
                                      strength=t["strength"], figures=figures,
                                      platforms=findings.platforms,
                                      comparison=(t["comparison"], t["study_comparison"]),
                                      margins=t["margins"], dose=t["dose_summary"],
                                      combined=t["combined"], adequacy=findings.adequacy,
                                      multiplicity=findings.multiplicity, blocks=t["blocks"],
                                      leaders=t["study_leaders"],
                                      every_claim=claim_sentences(t), captions=captions),
                        results / "findings" / "findings.html")
    for name in dict.fromkeys(dataset for dataset, _ in findings.roles):
        summary = findings.summary[findings.summary["dataset"] == name]
        agreement = findings.agreement[findings.agreement["dataset"] == name]
        roles = {clf: r for (dataset, clf), r in findings.roles.items() if dataset == name}
        manifest.write_text(dataset_summary_html(name, summary, agreement, roles),
                            results / name / "summary.html")
