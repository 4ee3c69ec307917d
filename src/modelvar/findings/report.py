"""The report's Findings page and per-dataset summary tables, as HTML.

Every sentence is generated from the tables (:mod:`~modelvar.findings.sources`,
:mod:`~modelvar.findings.components`, :mod:`~modelvar.findings.claims`): which source moved
accuracy and predictions most, for which classifier, on which data, with its interval, next to
the test-set yardstick; sources that had no effect; the largest variance shares. Nothing is
written by hand. Numbers print with three decimals, intervals in brackets.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

import numpy as np
import pandas as pd

from modelvar.findings.sources import no_effect, strength_summaries

STYLE = """<style>
.modelvar-findings { font-family: sans-serif; max-width: 1300px; }
.modelvar-findings table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
.modelvar-findings th, .modelvar-findings td { border: 1px solid #ccc; padding: 2px 6px;
  text-align: left; }
.modelvar-findings td:first-child, .modelvar-findings th:first-child { text-align: left; }
.modelvar-findings img { max-width: 100%; }
.modelvar-findings .supported { color: #1a7f37; } .modelvar-findings .contradicted {
  color: #b3261e; } .modelvar-findings .inconclusive { color: #8a6d00; }
.modelvar-findings .not-tested { color: #777; }
</style>"""


def fmt(x) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{x:.3f}"


def with_ci(value, low, high) -> str:
    if value is None or not np.isfinite(value):
        return "–"
    if not (np.isfinite(low) and np.isfinite(high)):
        return fmt(value)
    return f"{fmt(value)} [{fmt(low)}, {fmt(high)}]"


def _ci_columns(frame: pd.DataFrame, measures: dict[str, str]) -> pd.DataFrame:
    out = pd.DataFrame(index=frame.index)
    for column, title in measures.items():
        out[title] = [with_ci(v, lo, hi) for v, lo, hi in zip(
            frame[column], frame[f"{column}_low"], frame[f"{column}_high"], strict=True)]
    return out


def _largest(alone: pd.DataFrame, measure: str) -> pd.Series | None:
    """The one-at-a-time row with the largest ``measure`` (None when it is NaN everywhere)."""
    return alone.loc[alone[measure].idxmax()] if alone[measure].notna().any() else None


def _leaders(rows: pd.DataFrame) -> tuple[pd.Series | None, pd.Series | None, float | None]:
    """One dataset × classifier's sources: the source alone with the largest run-to-run
    accuracy SD and the one with the largest disagreement (None without one-at-a-time cells),
    and the test-set yardstick's SD (None without its row)."""
    alone = rows[~rows["source"].isin(["control", "test set"])]
    yard = rows.loc[rows["source"] == "test set", "accuracy_sd"]
    return (_largest(alone, "accuracy_sd"), _largest(alone, "disagreement"),
            float(yard.iloc[0]) if len(yard) else None)


def _counted(levels: list[str], of: int) -> str:
    """"50 % train on 3 of 4 datasets" or "50 % train on 2, data rel 0.2 on 1 of 3 datasets"."""
    counts = pd.Series(levels, dtype=object).value_counts(sort=True)
    return ", ".join(f"{level} on {n}" for level, n in counts.items()) + f" of {of} datasets"


def _told_apart(margins: pd.DataFrame | None, classifier: str, measure: str) -> str:
    """" (ahead of the runner-up beyond its interval on k)" from the margins table."""
    if margins is None or margins.empty:
        return ""
    mine = margins[(margins["classifier"] == classifier) & (margins["measure"] == measure)]
    if mine.empty:
        return ""
    k = int((mine["verdict"] == "supported").sum())
    return f" (ahead of the runner-up beyond its 95 % interval, paired over repeats, on {k})"


def study_sentences(sources: pd.DataFrame, margins: pd.DataFrame | None = None) -> list[str]:
    """Over datasets, per classifier: which source had the largest run-to-run accuracy SD and
    the largest disagreement on how many datasets — with ``margins``, on how many of them the
    leader was told apart from the runner-up —, and on how many the test-set yardstick
    (between-repeat SD) exceeded every source's run-to-run SD."""
    out = []
    for classifier, rows in sources.groupby("classifier", sort=False):
        by_sd, by_dis, yard_larger, n = [], [], 0, 0
        for _, part in rows.groupby("dataset", sort=False):
            sd, dis, yard = _leaders(part)
            if sd is None:
                continue
            n += 1
            by_sd.append(sd["level"])
            if dis is not None:
                by_dis.append(dis["level"])
            yard_larger += bool(yard is not None and yard > sd["accuracy_sd"])
        if n == 0:
            continue
        text = (f"For {classifier}, the largest run-to-run accuracy SD came from "
                f"{_counted(by_sd, n)}{_told_apart(margins, classifier, 'accuracy_sd')}")
        if by_dis:
            text += (f"; the largest disagreement between runs from {_counted(by_dis, n)}"
                     f"{_told_apart(margins, classifier, 'disagreement')}")
        out.append(text + f"; drawing another test set moved accuracy more than any source "
                          f"did within a repeat on {yard_larger} of {n} datasets.")
    return out


def sentences(sources: pd.DataFrame, components: pd.DataFrame,
              margins: pd.DataFrame | None = None) -> dict[str, list[str]]:
    """What the numbers say, per dataset: one sentence per classifier on which source moved
    accuracy and predictions most — with ``margins``
    (:func:`~modelvar.findings.comparison.leader_margins`) whether the data tell it apart from
    the runner-up —, the sources without effect, and the largest variance shares."""
    from modelvar.findings.comparison import margin_phrase

    def margin(dataset, classifier, measure) -> str:
        if margins is None or margins.empty:
            return ""
        row = margins[(margins["dataset"] == dataset) & (margins["classifier"] == classifier)
                      & (margins["measure"] == measure)]
        return margin_phrase(row.iloc[0]) if len(row) else ""

    out: dict[str, list[str]] = {}
    for (dataset, classifier), rows in sources.groupby(["dataset", "classifier"], sort=False):
        sd, dis, yard = _leaders(rows)
        if sd is None:
            continue
        text = (f"{classifier}'s accuracy varied most within a repeat under "
                f"{sd['level']} (run-to-run SD "
                f"{with_ci(sd['accuracy_sd'], sd['accuracy_sd_low'], sd['accuracy_sd_high'])})"
                f"{margin(dataset, classifier, 'accuracy_sd')}")
        if yard is not None:
            text += (f", against a between-repeat SD of {fmt(yard)} from drawing "
                     "another test set")
        if dis is not None:
            interval = with_ci(dis["disagreement"], dis["disagreement_low"],
                               dis["disagreement_high"])
            text += (f"; its predictions changed most under {dis['level']} (disagreement "
                     f"{interval} of test samples between two runs)"
                     f"{margin(dataset, classifier, 'disagreement')}")
        out.setdefault(dataset, []).append(text + ".")
    if "weak" in sources:
        for _, row in sources[sources["weak"].fillna(False).astype(bool)].drop_duplicates(
                ["dataset", "level"]).iterrows():
            out.setdefault(row["dataset"], []).append(
                f"{row['level'].capitalize()} changed {row['data_changed_frac']:.1%} of "
                f"{row['dataset']}'s numeric training cells (below "
                "perturbation.warn_changed_below): too weak to judge its source.")
    for _, row in no_effect(sources).iterrows():
        out.setdefault(row["dataset"], []).append(
            f"{row['level'].capitalize()} had no effect on {row['classifier']}: every run "
            f"predicted every sample alike in all {row['repeats']} repeats.")
    if not components.empty:
        rest = ["interactions", "runs (seed, draws)", "interactions and residual"]
        for (dataset, classifier, response), rows in components.groupby(
                ["dataset", "classifier", "response"], sort=False):
            effects = rows[~rows["component"].isin(rest)]
            if effects.empty:
                continue
            top = effects.loc[effects["share"].idxmax()]
            what = "run accuracy" if response == "accuracy" else "per-repeat agreement"
            left = rows[rows["component"].isin(rest)]
            tail = "; " + ", ".join(f"{r['component']} {fmt(r['share'])}"
                                    for _, r in left.iterrows()) if len(left) else ""
            out.setdefault(dataset, []).append(
                f"Over the factorial grid, of the factors, {top['component']} explains the "
                f"largest share of the variance of {classifier}'s {what}: "
                f"{with_ci(top['share'], top['share_low'], top['share_high'])}{tail}.")
    return out


def _sentences_html(sources: pd.DataFrame, components: pd.DataFrame,
                    margins: pd.DataFrame | None = None, open_up_to: int = 5) -> str:
    """The study's sentences over datasets (when there are several), then each dataset's in a
    ``<details>`` block: open when there are at most ``open_up_to`` datasets, folded (one line
    each) for a study of many."""
    def listed(items: list[str]) -> str:
        return "<ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in items) + "</ul>"

    per_dataset = sentences(sources, components, margins)
    if not per_dataset:
        return ("<p>No one-at-a-time cells: set <code>design: both</code> or "
                "<code>one-at-a-time</code> to measure each source against the control.</p>")
    parts = []
    if len(per_dataset) > 1:
        parts.append(f"<h3>Over the {len(per_dataset)} datasets</h3>"
                     + listed(study_sentences(sources, margins)) + "<h3>Per dataset</h3>")
    state = " open" if len(per_dataset) <= open_up_to else ""
    parts += [f"<details{state}><summary><b>{html.escape(dataset)}</b></summary>"
              f"{listed(items)}</details>" for dataset, items in per_dataset.items()]
    return "\n".join(parts)


def headline_sentences(sources: pd.DataFrame, components: pd.DataFrame,
                       margins: pd.DataFrame | None = None) -> list[str]:
    """The study's answer in a few sentences: over datasets when there are several (one per
    classifier), else the one dataset's."""
    per_dataset = sentences(sources, components, margins)
    if len(per_dataset) > 1:
        return study_sentences(sources, margins)
    return next(iter(per_dataset.values()), [])


def _rst_text(text: str) -> str:
    """Plain text as reStructuredText inline content (its markup characters escaped)."""
    for char in "\\*`_|[]":
        text = text.replace(char, "\\" + char)
    return text


def answer_rst(sources: pd.DataFrame, components: pd.DataFrame, figure: Path | None,
               margins: pd.DataFrame | None = None) -> str:
    """The report's first screen (the top of Snakemake's global description, rendered with
    Jinja2 and docutils): the study's headline sentences and the headline figure embedded,
    wrapped in Jinja's ``raw`` so that no sentence can be taken for a template. The workflow
    puts its reading guide below it (``rules/common.smk``, ``report_landing``)."""
    lines = ["The study's answer", "==================", ""]
    said = headline_sentences(sources, components, margins)
    lines += [f"- {_rst_text(t)}" for t in said] or [
        "No one-at-a-time cells: set ``design: both`` to measure each source against the "
        "control."]
    if figure is not None:
        # the URI in an indented block, 76 characters a line: docutils joins the lines (and
        # refuses a single line over 10,000 characters)
        data = "data:image/png;base64," + base64.b64encode(Path(figure).read_bytes()).decode()
        lines += ["", ".. image::", *(f"   {data[i:i + 76]}" for i in range(0, len(data), 76)),
                  "   :width: 100%", "   :alt: the study's headline figure"]
    return "{% raw %}\n" + "\n".join(lines) + "\n{% endraw %}\n"


def comparison_html(comparison: pd.DataFrame, study: pd.DataFrame) -> str:
    """The classifiers compared (:mod:`modelvar.findings.comparison`): its sentences and its
    table (over datasets when there are several, else the one dataset's, paired over
    repeats)."""
    from modelvar.findings.comparison import comparison_sentences

    several = comparison["dataset"].nunique() > 1
    table = (study if several else comparison).copy()
    table["a − b"] = [with_ci(v, lo, hi) for v, lo, hi in zip(
        table["difference"], table["difference_low"], table["difference_high"], strict=True)]
    keep = ["level", "classifier_a", "classifier_b", "measure",
            *(["datasets", "a_lower"] if several else ["repeats"]), "a − b"]
    shown = table[keep].rename(columns={"level": "source", "classifier_a": "a",
                                        "classifier_b": "b", "a_lower": "datasets a < b"})
    said = comparison_sentences(comparison, study) or [
        "No pair of classifiers differed beyond its interval under any source."]
    how = (f"mean over {comparison['dataset'].nunique()} datasets of each dataset's paired "
           "difference, 95 % t-interval over datasets" if several else
           "per-repeat differences paired over repeats (the same test set), 95 % t-interval")
    return ("<h3>Classifiers compared</h3><p>Which classifier is the more reproducible under "
            "each source alone: difference a − b in disagreement and in run-to-run accuracy SD "
            f"({how}); below 0, a is the more reproducible.</p><ul>"
            + "".join(f"<li>{html.escape(t)}</li>" for t in said) + "</ul>"
            + shown.to_html(index=False, float_format=lambda x: f"{x:.3f}"))


def dose_html(summary: pd.DataFrame) -> str:
    """Dose-response (:mod:`modelvar.findings.dose`): a sentence per curve and its table."""
    from modelvar.findings.dose import dose_sentences

    said = [t for items in dose_sentences(summary).values() for t in items]
    shown = summary[["dataset", "classifier", "family", "scheme", "points", "rho_accuracy_sd",
                     "rho_disagreement", "yardstick", "strength_at_yardstick"]].rename(
        columns={"rho_accuracy_sd": "ρ accuracy SD", "rho_disagreement": "ρ disagreement",
                 "strength_at_yardstick": "strength at the yardstick"})
    return ("<h3>Dose-response</h3><p>Where a source ran at two or more strengths alone: its "
            "run-to-run accuracy SD and disagreement against its strength (the control at "
            "0), Spearman's ρ over the points, and the strength at which the accuracy SD "
            "reaches the test-set yardstick.</p><ul>"
            + "".join(f"<li>{html.escape(t)}</li>" for t in said) + "</ul>"
            + shown.to_html(index=False, float_format=lambda x: f"{x:.3g}", na_rep="–"))


def _image(path: Path, alt: str) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def sources_table(sources: pd.DataFrame) -> pd.DataFrame:
    shown = sources.copy()
    strength = []
    said = strength_summaries()
    for _, row in shown.iterrows():
        strength.append(", ".join(f"{fmt(row[s.sources])} {s.unit}".strip()
                                  for family, s in said if row["source"] == family)
                        + (" (too weak to judge)" if bool(row.get("weak", False)) else ""))
    table = pd.concat([shown[["dataset", "classifier", "level"]].rename(
        columns={"level": "source"}), pd.Series(strength, index=shown.index, name="realised"),
        _ci_columns(shown, {"accuracy": "accuracy", "accuracy_sd": "accuracy SD in a repeat",
                            "disagreement": "disagreement", "ec_global": "global EC",
                            "kappa": "κ", "bias_01": "0-1 bias", "variance_01": "0-1 variance"
                            })], axis=1)
    table["independent flips"] = [fmt(v) for v in shown["independent_flips"]]
    table["identical repeats"] = [f"{int(i)} of {int(r)}" if s not in ("test set",) else ""
                                  for i, r, s in zip(shown["identical_repeats"].fillna(0),
                                                     shown["repeats"], shown["source"],
                                                     strict=True)]
    return table


def findings_html(sources: pd.DataFrame, study: pd.DataFrame, components: pd.DataFrame,
                  study_components: pd.DataFrame, claims: pd.DataFrame, *, notes: list[str],
                  strength: pd.DataFrame, figures: dict[str, Path],
                  platforms: pd.DataFrame | None = None,
                  comparison: tuple[pd.DataFrame, pd.DataFrame] | None = None,
                  margins: pd.DataFrame | None = None,
                  dose: pd.DataFrame | None = None) -> str:
    """The Findings page (module docstring): sentences, the headline figures (embedded), the
    sources, variance-components and claims tables, and notes."""
    parts = [STYLE, '<div class="modelvar-findings"><h2 id="findings">Findings</h2>']
    parts.append(_sentences_html(sources, components, margins))
    for title, path in figures.items():
        parts.append(f"<h3>{html.escape(title)}</h3>{_image(path, title)}")
    if comparison is not None and not comparison[0].empty:
        parts.append(comparison_html(*comparison))
    if dose is not None and not dose.empty:
        parts.append(dose_html(dose))
    parts.append("<h3>Sources of variance, one at a time</h3><p>Each source alone against the "
                 "control (nothing perturbed, 100 % of the training pool, one fixed model "
                 "seed); <i>test set</i> is the between-repeat SD of the control's accuracy. "
                 "Means over repeats with 95 % t-intervals over repeats; disagreement = share of "
                 "test samples two runs predict differently; realised = the perturbation's "
                 "measured strength (mean |Δx| in training SDs, share of cells changed).</p>")
    parts.append(sources_table(sources).to_html(index=False, escape=True) if not sources.empty
                 else "<p>–</p>")
    if not study.empty and study["datasets"].max() > 1:
        parts.append("<h3>Over datasets</h3><p>Means over datasets with 95 % t-intervals over "
                     "datasets.</p>")
        shown = pd.concat([study[["classifier", "level", "datasets"]].rename(
            columns={"level": "source"}), _ci_columns(study, {
                "accuracy_sd": "accuracy SD in a repeat", "disagreement": "disagreement"})],
            axis=1)
        parts.append(shown.to_html(index=False))
    if not components.empty:
        parts.append("<h3>Variance components over the factorial grid</h3><p>Share of the "
                     "variance of run accuracy and of per-repeat percent agreement explained "
                     "by each factor (type II sums of squares of a main-effects model, "
                     "statsmodels), with 95 % cluster-bootstrap intervals over repeats.</p>")
        shown = components[["dataset", "classifier", "response", "component"]].copy()
        shown["share"] = [with_ci(v, lo, hi) for v, lo, hi in zip(
            components["share"], components["share_low"], components["share_high"],
            strict=True)]
        parts.append(shown.to_html(index=False))
        if study_components["datasets"].max() > 1:
            shown = study_components[["classifier", "response", "component", "datasets"]].copy()
            shown["mean share"] = [with_ci(v, lo, hi) for v, lo, hi in zip(
                study_components["share"], study_components["share_low"],
                study_components["share_high"], strict=True)]
            parts.append("<p>Over datasets:</p>" + shown.to_html(index=False))
    parts.append("<h3>Seed 004's stated findings, checked on this run</h3>")
    if claims.empty:
        parts.append("<p>–</p>")
    else:
        rows = []
        for _, c in claims.iterrows():
            cls = c["status"].replace(" ", "-")
            rows.append(f"<tr><td>{html.escape(c['dataset'])}</td><td>"
                        f"{html.escape(c['classifier'])}</td><td>{html.escape(c['statement'])}"
                        f'</td><td class="{cls}">{c["status"]}</td><td>'
                        f"{html.escape(c['evidence'])}</td></tr>")
        parts.append("<table><tr><th>dataset</th><th>classifier</th><th>claim</th><th>status"
                     "</th><th>numbers</th></tr>" + "".join(rows) + "</table>")
    if not strength.empty:
        parts.append("<h3>Realised perturbation strength</h3><p>Per dataset and level, over "
                     "every run of every cell with that level: mean |Δx| of the changed numeric "
                     "cells in training SDs, share of numeric cells changed, share of "
                     "categorical cells changed.</p>" + strength.rename(columns={
                         "mean_abs_shift_sd": "mean |Δx| (training SDs)",
                         "numeric_changed_frac": "numeric cells changed",
                         "categorical_changed_frac": "categorical cells changed"}).to_html(
                         index=False, float_format=lambda x: f"{x:.3f}", na_rep="–"))
    if platforms is not None and not platforms.empty:
        parts.append("<h3>Where the runs ran</h3><p>A run's predictions are bit-identical when "
                     "it is fitted again on the same kind of machine, whatever the job's "
                     "thread count; another CPU's vector kernels, another BLAS or torch, or a "
                     "GPU may change their last bits (docs/decisions.md, \"Determinism\"). "
                     "<code>modelvar verify RESULTS --refit N</code> fits N recorded runs again "
                     "and says how many reproduce exactly.</p>"
                     + platforms.to_html(index=False, escape=True))
    if notes:
        parts.append("<h3>Notes</h3><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes)
                     + "</ul>")
    parts.append("</div>")
    return "\n".join(parts)


def dataset_summary_html(dataset: str, summary: pd.DataFrame, agreement: pd.DataFrame,
                         roles: dict[str, tuple]) -> str:
    """Per cell and classifier: accuracy, within-repeat SD, global EC and percent agreement,
    each the mean over repeats with a 95 % t-interval, and identical repeats."""
    from modelvar.findings.sources import mean_ci
    from modelvar.study.cells import cell_label

    rows = []
    s = summary[summary["subset"] == "all"]
    for (classifier, cell), part in s.groupby(["classifier", "cell"], sort=True,
                                              observed=True):
        row = {"classifier": classifier, "cell": cell_label(str(cell)),
               "design": ", ".join(roles.get(str(cell), ()))}
        for metric, stat, title, bounds in (("accuracy", "mean", "accuracy", (0, 1)),
                                            ("accuracy", "sd", "accuracy SD in a repeat",
                                             (0, 1)),
                                            ("ec_global", "mean", "global EC", (0, 1)),
                                            ("pa", "mean", "percent agreement", (0, 1))):
            values = part.loc[part["metric"] == metric, stat]
            row[title] = with_ci(*mean_ci(values, bounds))
        same = agreement[(agreement["classifier"] == classifier) & (agreement["cell"] == cell)]
        row["identical repeats"] = f"{int(same['all_runs_identical'].sum())} of {len(same)}"
        rows.append(row)
    table = pd.DataFrame(rows)
    return (STYLE + f'<div class="modelvar-findings"><h3>{html.escape(dataset)}: every cell'
            "</h3><p>Means over repeats with 95 % t-intervals over repeats.</p>"
            + table.to_html(index=False) + "</div>")
