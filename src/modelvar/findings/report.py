"""The report's Findings page and per-dataset summary tables, as HTML.

Every sentence is generated from the tables (:mod:`~modelvar.findings.sources`,
:mod:`~modelvar.findings.components`, :mod:`~modelvar.findings.claims`): which source moved
accuracy and predictions most, for which classifier, on which data, with its interval, next to
the test-set yardstick; sources that had no effect; the largest variance shares. Nothing is
written by hand. Numbers print with at least three decimals and two significant digits (a
difference told apart from 0 never prints as 0), intervals in brackets.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

import numpy as np
import pandas as pd

from modelvar.findings.components import MIN_CLUSTERS, NOT_FACTORS
from modelvar.findings.over_datasets import MIN_DATASETS
from modelvar.findings.paired import (
    CONTRADICTED,
    EQUIVALENCE_RATIO,
    EQUIVALENT,
    IDENTICAL,
    INCONCLUSIVE,
    MIN_FOR_INTERVAL,
    SUPPORTED,
    fmt,
    repeats_phrase,
    signed_ci,
    with_ci,
)
from modelvar.findings.sources import YARDSTICK, alone, no_effect, strength_summaries
from modelvar.study import stopping

STYLE = """<style>
.modelvar-findings { font-family: sans-serif; max-width: 1300px; }
.modelvar-findings table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
.modelvar-findings th, .modelvar-findings td { border: 1px solid #ccc; padding: 2px 6px;
  text-align: left; }
.modelvar-findings td:first-child, .modelvar-findings th:first-child { text-align: left; }
.modelvar-findings img { max-width: 100%; }
.modelvar-findings figure { margin: 0.5em 0 1.5em; }
.modelvar-findings figcaption { font-size: 0.9em; color: #333; max-width: 1080px; }
.modelvar-findings .supported { color: #1a7f37; } .modelvar-findings .contradicted {
  color: #b3261e; } .modelvar-findings .inconclusive { color: #8a6d00; }
.modelvar-findings .not-tested { color: #777; }
.modelvar-findings details.modelvar-blocks { margin: 0.5em 0 1em; }
</style>"""


def _ci_columns(frame: pd.DataFrame, measures: dict[str, str]) -> pd.DataFrame:
    out = pd.DataFrame(index=frame.index)
    for column, title in measures.items():
        out[title] = [with_ci(v, lo, hi) for v, lo, hi in zip(
            frame[column], frame[f"{column}_low"], frame[f"{column}_high"], strict=True)]
    return out


#: measure → (what its largest value says, what about-equal values say, its short name,
#: what it is of)
MEASURE_WORDS = {"accuracy_sd": ("accuracy varied most within a repeat",
                                 "accuracy varied about equally within a repeat",
                                 "run-to-run SD", "accuracy"),
                 "disagreement": ("predictions changed most",
                                  "predictions changed about equally", "disagreement",
                                  "predictions")}


def _margin(margins: pd.DataFrame | None, dataset, classifier, measure) -> pd.Series | None:
    if margins is None or margins.empty:
        return None
    row = margins[(margins["dataset"] == dataset) & (margins["classifier"] == classifier)
                  & (margins["measure"] == measure)]
    return row.iloc[0] if len(row) else None


def _row(rows: pd.DataFrame, level: str) -> pd.Series:
    return rows[rows["level"] == level].iloc[0]


def _value(row: pd.Series, measure: str) -> str:
    return with_ci(row[measure], row[f"{measure}_low"], row[f"{measure}_high"])


def _margin_text(margin: pd.Series) -> str:
    repeats = int(margin["repeats"])
    return (f"difference {signed_ci(margin['margin'], margin['margin_low'], margin['margin_high'])}"
            f", {repeats} repeats")


def _ratio_text(row: pd.Series, prefix: str = "ratio") -> str:
    if not np.isfinite(row["ratio"]):
        return ""
    if np.isfinite(row["ratio_low"]):
        return f"{prefix} {fmt(row['ratio'])} [{fmt(row['ratio_low'])}, {fmt(row['ratio_high'])}]"
    return f"{prefix} {fmt(row['ratio'])}"


def _left_out(margin: pd.Series | None) -> str:
    if margin is None or not margin.get("left_out"):
        return ""
    names = str(margin["left_out"]).split("; ")
    return (f". {'; '.join(names).capitalize()} {'is' if len(names) == 1 else 'are'} too weak "
            "to judge and not ranked")


def _others(n: int) -> str:
    return "the other source" if n == 1 else "both other sources" if n == 2 else \
        f"all {n} other sources"


def excludes_zero_alone(low: float, high: float) -> bool:
    """An interval that excludes 0 on its own (95 % for the comparison alone)."""
    return bool(np.isfinite(low) and np.isfinite(high) and (low > 0 or high < 0))


def verdict_shown(verdict: str, low: float = np.nan, high: float = np.nan) -> str:
    """A verdict as a table shows it: an inconclusive comparison whose 95 % interval excludes
    0 says so (it is apart on its own, not under the page's control)."""
    if verdict == INCONCLUSIVE and excludes_zero_alone(low, high):
        return "inconclusive (its interval excludes 0 on its own, not under the page's control)"
    return verdict


def leader_sentence(rows: pd.DataFrame, margin: pd.Series | None, classifier: str,
                    measure: str) -> str | None:
    """One dataset × classifier: which source alone moved ``measure`` most, in one sentence of
    the same shape whatever the verdict (two copies of one classifier read alike): the
    largest estimate with its value, whether it is told apart from every other source under
    the page's control (``margin``, :func:`~modelvar.findings.comparison.leader_margins`) or
    which sources it is not told apart from (each comparison's p above the bound the claim
    faces), the runner-up with its value and the margin; two sources that moved it about
    equally where their ratio is within the equivalence margin."""
    from modelvar.findings.kinds import not_apart_from

    single = alone(rows)
    if single[measure].notna().sum() == 0:
        return None
    most, equal, short, what = MEASURE_WORDS[measure]
    if single[measure].notna().sum() == 1:  # one source: no "most" to claim
        top = single.loc[single[measure].idxmax()]
        return (f"{classifier}'s {most.replace(' most', '')} under {top['level']} ({short} "
                f"{_value(top, measure)}), the only source studied alone")
    if margin is None:  # no margins given: the largest, untested
        top = single.loc[single[measure].idxmax()]
        return f"{classifier}'s {most} under {top['level']} ({short} {_value(top, measure)})"
    lead, second = _row(single, margin["leader"]), _row(single, margin["runner_up"])
    repeats = int(margin["repeats"])
    left = _left_out(margin)
    runner = (f"the runner-up, {margin['runner_up']}, had {_value(second, measure)} "
              f"({_margin_text(margin)})")
    if repeats < MIN_FOR_INTERVAL:
        return (f"{classifier}'s {what}: no source is ranked first with {repeats} repeats "
                f"(run ≥ {MIN_FOR_INTERVAL} for a test). The estimates: {margin['leader']} "
                f"{fmt(lead[measure])}, {margin['runner_up']} {fmt(second[measure])}" + left)
    if margin["verdict"] == EQUIVALENT:
        equivalence = margin.get("equivalence_ratio", EQUIVALENCE_RATIO)
        return (f"{classifier}'s {equal} under {margin['leader']} and {margin['runner_up']}: "
                f"{short} {_value(lead, measure)} and {_value(second, measure)} "
                f"({_ratio_text(margin)}, inside the equivalence margin "
                f"{1 / equivalence:.3g}–{equivalence:.3g}; {repeats} repeats)" + left)
    others = int(margin["against"])
    if margin["verdict"] == SUPPORTED:
        return (f"{classifier}'s {most} under {margin['leader']} ({short} "
                f"{_value(lead, measure)}), told apart from {_others(others)}; {runner}"
                + left)
    bound = float(margin.get("p_bound", np.nan))
    rivals = not_apart_from(margin, bound) if np.isfinite(bound) else []
    p_others = dict(zip(margin.get("others", []) or [], margin.get("p_others", []) or [],
                        strict=False))
    untested = [o for o in rivals if not np.isfinite(p_others.get(o, np.nan))]
    tested = [o for o in rivals if o not in untested]
    said = []
    if tested:
        said.append("not told apart from " + (_others(others) if len(tested) == others
                                              else _names(tested)))
    if untested:
        said.append(f"equal to {_names(untested)} in every repeat (nothing to test)")
    if not said:
        said.append("not told apart under the page's control")
    alone_apart = excludes_zero_alone(margin["margin_low"], margin["margin_high"])
    return (f"{classifier}'s {most} under {margin['leader']} by its estimate ({short} "
            f"{_value(lead, measure)}), {' and '.join(said)}, so no source is ranked first; "
            f"{runner[:-1]}"
            + ("; this interval excludes 0 on its own, not under the page's headline control"
               if alone_apart else "") + ")" + left)


def yardstick_sentence(rows: pd.DataFrame, margins: pd.DataFrame | None, dataset,
                       classifier: str) -> str | None:
    """The test-set yardstick with its interval, against the source alone with the largest
    run-to-run SD: a comparison of the two 95 % intervals (one number per dataset, nothing to
    pair; not a test under the page's control), said as such."""
    yard = rows[rows["source"] == YARDSTICK]
    single = alone(rows)
    if yard.empty or single["accuracy_sd"].notna().sum() == 0:
        return None
    y = yard.iloc[0]
    margin = _margin(margins, dataset, classifier, "accuracy_sd")
    top = _row(single, margin["leader"]) if margin is not None else \
        single.loc[single["accuracy_sd"].idxmax()]
    text = (f"A new repeat (another test set and training pool) moved {classifier}'s accuracy "
            f"by a between-repeat SD of {_value(y, 'accuracy_sd')}")
    bounds = (y["accuracy_sd_low"], y["accuracy_sd_high"], top["accuracy_sd_low"],
              top["accuracy_sd_high"])
    if not all(np.isfinite(b) for b in bounds):
        return text + (f"; no intervals to set it against {top['level']}'s run-to-run SD "
                       f"({fmt(top['accuracy_sd'])})")
    how = "compared by their 95 % intervals, not tested under the page's control"
    if y["accuracy_sd_low"] > top["accuracy_sd_high"]:
        return text + (f": more than any source did within a repeat ({top['level']}, the "
                       f"largest, had {_value(top, 'accuracy_sd')}; the intervals lie apart, "
                       f"{how})")
    if y["accuracy_sd_high"] < top["accuracy_sd_low"]:
        return text + (f": less than {top['level']} did within a repeat "
                       f"({_value(top, 'accuracy_sd')}; the intervals lie apart, {how})")
    return text + (f"; {top['level']}'s run-to-run SD within a repeat was "
                   f"{_value(top, 'accuracy_sd')}: the intervals overlap ({how})")


COMBINED_WORDS = {SUPPORTED: "more, told apart", CONTRADICTED: "less, told apart",
                  EQUIVALENT: "about as much", IDENTICAL: "the same"}


def combined_sentence(combined: pd.DataFrame | None, dataset, classifier: str) -> str | None:
    """Each source alone against all combined, in disagreement (Summers & Dinneen's check):
    the ratio with its interval and the verdict, then which sources alone gave about as much
    as all together."""
    if combined is None or combined.empty:
        return None
    mine = combined[(combined["dataset"] == dataset) & (combined["classifier"] == classifier)]
    if mine.empty:
        return None
    said = []
    for _, row in mine.iterrows():
        verdict = COMBINED_WORDS.get(row["verdict"], "inconclusive")
        ratio = _ratio_text(row)
        said.append(f"{row['level']} {fmt(row['alone'])} ({ratio + ', ' if ratio else ''}"
                    f"{verdict})")
    text = (f"{classifier}'s disagreement with all sources combined was "
            f"{fmt(mine['combined'].iloc[0])}. Each source alone, against it: "
            + "; ".join(said))
    equal = mine[mine["verdict"] == EQUIVALENT]
    if len(equal):
        text += (f". {' and '.join(equal['level'])} alone gave about as much as all sources "
                 "together (Summers & Dinneen's finding)")
    elif (mine["repeats"] >= MIN_FOR_INTERVAL).all():
        text += ". No source alone was shown to give as much as all together"
    return text


#: the questions the per-dataset sentences answer, in the page's order
QUESTIONS = ("Which source moved accuracy most?", "Which source moved predictions most?",
             "Against another test set and training pool", "Against all sources combined",
             "Sources too weak or without effect", "Variance shares over the factorial grid")


def sentences_by_question(sources: pd.DataFrame, components: pd.DataFrame,
                          margins: pd.DataFrame | None = None,
                          combined: pd.DataFrame | None = None
                          ) -> dict[str, dict[str, list[str]]]:
    """What the numbers say, per dataset and question (:data:`QUESTIONS`): per classifier
    which source moved accuracy and predictions most (``margins``,
    :func:`~modelvar.findings.comparison.leader_margins`), the test-set yardstick with its
    interval, each source against all combined, the sources too weak or without effect, and
    the variance shares (ranked only where the leader is told apart from every other)."""
    out: dict[str, dict[str, list[str]]] = {}

    def say(dataset, question: int, text: str | None, end: str = ".") -> None:
        if text:
            out.setdefault(dataset, {q: [] for q in QUESTIONS})[QUESTIONS[question]].append(
                text + end)

    for (dataset, classifier), rows in sources.groupby(["dataset", "classifier"], sort=False):
        for question, measure in enumerate(MEASURE_WORDS):
            say(dataset, question, leader_sentence(rows, _margin(margins, dataset, classifier,
                                                                  measure), classifier, measure))
        say(dataset, 2, yardstick_sentence(rows, margins, dataset, classifier))
        say(dataset, 3, combined_sentence(combined, dataset, classifier))
    if "weak" in sources:
        for _, row in sources[sources["weak"].fillna(False).astype(bool)].drop_duplicates(
                ["dataset", "level"]).iterrows():
            say(row["dataset"], 4,
                f"{row['level'].capitalize()} changed {row['data_changed_frac']:.1%} of "
                f"{row['dataset']}'s numeric training cells (below "
                "perturbation.warn_changed_below): too weak to judge its source")
    for _, row in no_effect(sources).iterrows():
        say(row["dataset"], 4,
            f"{row['level'].capitalize()} had no effect on {row['classifier']}: every run "
            f"predicted every sample alike in all {row['repeats']} repeats")
    if not components.empty:
        for (dataset, classifier, response), rows in components.groupby(
                ["dataset", "classifier", "response"], sort=False):
            say(dataset, 5, components_sentence(rows, classifier, response), end="")
    return {d: {q: said for q, said in by_q.items() if said} for d, by_q in out.items()}


def sentences(sources: pd.DataFrame, components: pd.DataFrame,
              margins: pd.DataFrame | None = None,
              combined: pd.DataFrame | None = None) -> dict[str, list[str]]:
    """Per dataset, every sentence of :func:`sentences_by_question` in the questions' order."""
    return {d: [t for said in by_q.values() for t in said]
            for d, by_q in sentences_by_question(sources, components, margins,
                                                 combined).items()}


def components_sentence(rows: pd.DataFrame, classifier: str, response: str) -> str | None:
    """The variance shares of one response: the largest named only where it is told apart
    from every other factor (jackknife, under the page's control); else not ranked, and
    never below :data:`MIN_CLUSTERS` repeats."""
    effects = rows[~rows["component"].isin(NOT_FACTORS)].sort_values(
        "share_estimate" if "share_estimate" in rows else "share", ascending=False)
    if effects.empty:
        return None
    what = "run accuracy" if response == "accuracy" else "per-repeat agreement"
    repeats = int(rows["repeats"].iloc[0])
    listed = ", ".join(f"{r['component']} {with_ci(r['share'], r['share_low'], r['share_high'])}"
                       for _, r in effects.iterrows())
    if repeats < MIN_CLUSTERS or len(effects) < 2:
        return (f"Over the factorial grid, no factor of {classifier}'s {what} is ranked first "
                f"with {repeats} repeats (run ≥ {MIN_CLUSTERS}). The estimated shares: "
                f"{listed}.")
    top, second = effects.iloc[0], effects.iloc[1]
    margin = signed_ci(top["lead_margin"], top["lead_margin_low"], top["lead_margin_high"])
    others = int(top.get("lead_against", len(effects) - 1))
    if bool(top.get("lead_held", False)):
        return (f"Over the factorial grid, {top['component']} has the largest share of the "
                f"variance of {classifier}'s {what}: "
                f"{with_ci(top['share'], top['share_low'], top['share_high'])}, told "
                f"apart from {_others(others).replace('source', 'factor')}; "
                f"the runner-up, {second['component']}, has "
                f"{with_ci(second['share'], second['share_low'], second['share_high'])} "
                f"(difference {margin}). All shares: {listed}.")
    from modelvar.findings.kinds import not_apart_from

    bound = float(top.get("p_bound", np.nan)) if "p_bound" in top else np.nan
    rivals = not_apart_from(top, bound) if np.isfinite(bound) and \
        top.get("others") is not None else []
    rivals_said = (f"not told apart from {_names(rivals)}" if rivals else
                   "not told apart from every other factor under the page's control")
    return (f"Over the factorial grid, no factor of {classifier}'s {what} is ranked first: "
            f"the largest estimate, {top['component']} "
            f"{with_ci(top['share'], top['share_low'], top['share_high'])}, is {rivals_said} "
            f"(the runner-up, {second['component']}, "
            f"{with_ci(second['share'], second['share_low'], second['share_high'])}). All "
            f"shares: {listed}.")


def _names(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def study_sentences(sources: pd.DataFrame, margins: pd.DataFrame | None = None,
                    leaders: pd.DataFrame | None = None) -> list[str]:
    """Over datasets, per classifier, in short sentences: per measure, the leading source over
    datasets where the page states one (``leaders``, :func:`~modelvar.findings.
    over_datasets.study_leaders`: from 6 datasets), then on which datasets a source moved it
    most (told apart from every other), on which two moved it about equally, on which none
    was ranked first, where there were too few repeats for a test; then where the test-set
    yardstick's interval lay apart from the largest source's. Counts are of the datasets
    where the classifier's sources ran alone; a measure without margins (no test made) is not
    said."""
    out = []
    for classifier, rows in sources.groupby("classifier", sort=False):
        datasets = [d for d, part in rows.groupby("dataset", sort=False)
                    if alone(part)["accuracy_sd"].notna().any()]
        n = len(datasets)
        if n == 0:
            continue
        for measure, (_most, _equal, _short, what) in MEASURE_WORDS.items():
            firsts: dict[str, list[str]] = {}
            equals, unranked, untested = [], [], []
            for dataset in datasets:
                margin = _margin(margins, dataset, classifier, measure)
                if margin is None:
                    continue
                if margin["repeats"] < MIN_FOR_INTERVAL:
                    untested.append(dataset)
                elif margin["verdict"] == SUPPORTED:
                    firsts.setdefault(margin["leader"], []).append(dataset)
                elif margin["verdict"] == EQUIVALENT:
                    equals.append(f"{margin['leader']} and {margin['runner_up']} moved it about "
                                  f"equally on {dataset}")
                else:
                    unranked.append(dataset)

            parts = []
            over = _study_leader(leaders, classifier, measure)
            if over is not None:
                parts.append(over)
            if firsts:
                parts.append("; ".join(f"{level} moved it most on {_every(where, n)}" if i == 0
                                       else f"{level} on {_every(where, n)}"
                                       for i, (level, where) in enumerate(firsts.items()))
                             + ", told apart from every other source")
            parts += equals
            if unranked:
                parts.append(f"no source is ranked first on {_every(unranked, n, True)}")
            if untested:
                parts.append(f"too few repeats for a test on {_every(untested, n, True)} (run ≥ "
                             f"{MIN_FOR_INTERVAL})")
            if parts:
                scope = "accuracy within a repeat" if what == "accuracy" else what
                out.append(f"{classifier}, {scope}: " + "; ".join(parts) + ".")
        more, less = [], []
        for dataset in datasets:
            text = yardstick_sentence(rows[rows["dataset"] == dataset], margins, dataset,
                                      classifier) or ""
            (more if ": more than any source" in text else
             less if ": less than" in text else []).append(dataset)
        rest = [d for d in datasets if d not in more and d not in less]
        parts = ([f"more than any single source did within a repeat on {_every(more, n)}"]
                 if more else []) + \
            ([f"less than its largest source on {_every(less, n)}"] if less else [])
        if parts:
            out.append(f"{classifier}: a new test set and training pool moved accuracy "
                       + "; ".join(parts)
                       + (f"; on {_every(rest, n)} the two intervals overlap" if rest else "")
                       + " (95 % intervals compared, not tested under the page's control).")
        else:
            out.append(f"{classifier}: the 95 % intervals of how much a new test set and "
                       "training pool and the largest single source moved accuracy overlap on "
                       f"{_every(rest, n)} (compared, not tested under the page's control).")
    return out


def _study_leader(leaders: pd.DataFrame | None, classifier: str, measure: str) -> str | None:
    """The leading source over datasets of one classifier and measure, as a clause."""
    if leaders is None or leaders.empty:
        return None
    row = leaders[(leaders["classifier"] == classifier) & (leaders["measure"] == measure)]
    if row.empty:
        return None
    row = row.iloc[0]
    n = int(row["datasets"])
    margin = signed_ci(row["margin"], row["margin_low"], row["margin_high"])
    if row["verdict"] == SUPPORTED:
        return (f"over the {n} datasets, {row['leader']} moved it most, told apart from every "
                f"other source (mean margin over the runner-up, {row['runner_up']}: {margin}; "
                "t-tests over datasets)")
    return (f"over the {n} datasets, no source is ranked first ({row['leader']}'s mean is "
            f"the largest, not told apart from every other source; margin over "
            f"{row['runner_up']}: {margin})")


def _every(where: list[str], n: int, negative: bool = False) -> str:
    """The datasets named, or "both datasets", "all N datasets" ("either dataset", "any of
    the N datasets" in a negative statement) when they are every one of the n."""
    if len(where) < n or n == 1:
        return _names(where)
    if n == 2:
        return "either dataset" if negative else "both datasets"
    return f"any of the {n} datasets" if negative else f"all {n} datasets"


def multiplicity_line(multiplicity) -> str:
    """The page's two promises in one plain line: per tier, its kinds of claim, how many hold
    of those with a test, and what its control guarantees (:mod:`~modelvar.findings.
    multiplicity`)."""
    if multiplicity is None or multiplicity.comparisons == 0:
        return ("No claim here has a test (each needs ≥ 3 repeats): nothing is told apart.")
    said = []
    for tier in multiplicity.tiers:
        if not tier.claims:
            continue
        what = ", ".join(tier.kinds)
        if tier.tier == "headline":
            said.append(f"Headline claims ({what}): {tier.held} of {tier.claims} hold, under "
                        f"{tier.procedure}'s control of the family-wise error rate: the chance "
                        f"that any of them is false is at most {tier.level * 100:.0f} %.")
        else:
            said.append(f"Exploratory claims ({what}): {tier.held} of {tier.claims} hold, "
                        f"under {tier.procedure}'s control of the false-discovery rate: on "
                        f"average at most {tier.level * 100:.0f} % of them are false.")
    said.append("Only claims that hold are called told apart or equivalent; intervals are "
                "95 % for each comparison alone.")
    if multiplicity.note:
        said.append(multiplicity.note)
    return " ".join(said)


ESTIMAND = ("What the verdicts are about: a dataset's verdicts are about test sets and training "
            "pools drawn from that dataset (its repeats). A statement about new data of the "
            "kind needs datasets, not repeats: the page makes one (a t-test over the "
            f"datasets' mean differences) from {MIN_DATASETS} datasets on.")


def _sentences_html(sources: pd.DataFrame, components: pd.DataFrame,
                    margins: pd.DataFrame | None = None, open_up_to: int = 5, *,
                    combined: pd.DataFrame | None = None, adequacy: list[str] | None = None,
                    multiplicity=None, leaders: pd.DataFrame | None = None,
                    shown_figures: str = "") -> str:
    """The study's adequacy (where it limits what can be said) and multiplicity, its sentences
    over datasets (when there are several), its figures (``shown_figures``: HTML), then each
    dataset's sentences in a ``<details>`` block: open when there are at most ``open_up_to``
    datasets, folded (one line each) for a study of many."""
    def listed(items: list[str]) -> str:
        return "<ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in items) + "</ul>"

    per_dataset = sentences_by_question(sources, components, margins, combined)
    if not per_dataset:
        return ("<p>No one-at-a-time cells: set <code>design: both</code> or "
                "<code>one-at-a-time</code> to measure each source against the control.</p>"
                + shown_figures)
    parts = [f"<p><b>{html.escape(line)}</b></p>" for line in adequacy or []]
    parts.append(f"<p>{html.escape(multiplicity_line(multiplicity))}</p>")
    parts.append(f"<p>{html.escape(ESTIMAND)}</p>")
    if len(per_dataset) > 1:
        parts.append(f"<h3>Over the {len(per_dataset)} datasets</h3>"
                     + listed(study_sentences(sources, margins, leaders)))
    parts.append(shown_figures)
    if len(per_dataset) > 1:
        parts.append("<h3>Per dataset</h3>")
    state = " open" if len(per_dataset) <= open_up_to else ""
    for dataset, by_question in per_dataset.items():
        body = "".join(f"<p><i>{html.escape(q)}</i></p>{listed(said)}"
                       for q, said in by_question.items())
        parts.append(f"<details{state}><summary><b>{html.escape(dataset)}</b></summary>"
                     f"{body}</details>")
    return "\n".join(parts)


def headline_sentences(sources: pd.DataFrame, components: pd.DataFrame,
                       margins: pd.DataFrame | None = None,
                       combined: pd.DataFrame | None = None,
                       adequacy: list[str] | None = None,
                       leaders: pd.DataFrame | None = None) -> list[str]:
    """The study's answer in a few sentences: the adequacy line where it limits them, then over
    datasets when there are several (one per classifier), else the one dataset's."""
    per_dataset = sentences(sources, components, margins, combined)
    said = study_sentences(sources, margins, leaders) if len(per_dataset) > 1 else \
        next(iter(per_dataset.values()), [])
    return [*(adequacy or []), *said]


def _rst_text(text: str) -> str:
    """Plain text as reStructuredText inline content (its markup characters escaped)."""
    for char in "\\*`_|[]":
        text = text.replace(char, "\\" + char)
    return text


def answer_rst(sources: pd.DataFrame, components: pd.DataFrame, figure: Path | None,
               margins: pd.DataFrame | None = None, combined: pd.DataFrame | None = None,
               adequacy: list[str] | None = None, leaders: pd.DataFrame | None = None,
               promise: str | None = None, caption: str | None = None) -> str:
    """The report's first screen (the top of Snakemake's global description, rendered with
    Jinja2 and docutils): the study's headline sentences and the headline figure embedded,
    wrapped in Jinja's ``raw`` so that no sentence can be taken for a template. The workflow
    puts its reading guide below it (``rules/common.smk``, ``report_landing``). ``promise``:
    the page's two promises (:func:`multiplicity_line`), said after the sentences."""
    lines = ["The study's answer", "==================", ""]
    said = headline_sentences(sources, components, margins, combined, adequacy, leaders)
    if said and promise:
        said = [*said, promise]
    lines += [f"- {_rst_text(t)}" for t in said] or [
        "No one-at-a-time cells: set ``design: both`` to measure each source against the "
        "control."]
    if figure is not None:
        # the URI in an indented block, 76 characters a line: docutils joins the lines (and
        # refuses a single line over 10,000 characters)
        data = "data:image/png;base64," + base64.b64encode(Path(figure).read_bytes()).decode()
        lines += ["", ".. image::", *(f"   {data[i:i + 76]}" for i in range(0, len(data), 76)),
                  "   :width: 100%", "   :alt: the study's headline figure"]
        if caption:
            lines += ["", f"*{_rst_text(caption)}*"]
    return "{% raw %}\n" + "\n".join(lines) + "\n{% endraw %}\n"


def _comparison_table(table: pd.DataFrame, over: bool) -> pd.DataFrame:
    """A comparison table as the page shows it: the difference with its interval, the ratio
    (per dataset), the tier and the verdict (an inconclusive one whose interval excludes 0 on
    its own says so)."""
    table = table.copy()
    table["a − b"] = [signed_ci(v, lo, hi) for v, lo, hi in zip(
        table["difference"], table["difference_low"], table["difference_high"], strict=True)]
    if not over:
        table["a / b"] = [_ratio_text(row, "").strip() or "–" for _, row in table.iterrows()]
    table["verdict"] = [verdict_shown(v, lo, hi) for v, lo, hi in zip(
        table["verdict"], table["difference_low"], table["difference_high"], strict=True)]
    if "tier" not in table:
        table["tier"] = "–"
    keep = ["level", "classifier_a", "classifier_b", "measure",
            *(["datasets", "a_lower"] if over else ["dataset", "repeats"]), "a − b",
            *([] if over else ["a / b"]), "tier", "verdict"]
    return table[keep].rename(columns={"level": "source", "classifier_a": "a",
                                       "classifier_b": "b", "a_lower": "datasets a < b"})


def comparison_html(comparison: pd.DataFrame, study: pd.DataFrame) -> str:
    """The classifiers compared (:mod:`modelvar.findings.comparison`): its sentences and its
    tables (over datasets from :data:`MIN_DATASETS` datasets, beside the per-dataset one,
    paired over repeats)."""
    from modelvar.findings.comparison import comparison_sentences

    n = comparison["dataset"].nunique()
    over = n >= MIN_DATASETS
    said = comparison_sentences(comparison, study) or [
        "No pair of classifiers was told apart or found equivalent under any source."]
    how = ("per-repeat differences paired over repeats (the same test set), 95 % t-interval; "
           "the ratio a / b with its interval")
    if over:
        how = (f"over the {n} datasets: the mean of each dataset's paired difference, 95 % "
               "t-interval over datasets, t-test over datasets; per dataset: " + how)
    tables = folded("the table per dataset", _comparison_table(comparison, False).to_html(
        index=False, na_rep="–"))
    if over:
        tables = folded("the table over datasets", _comparison_table(study, True).to_html(
            index=False, na_rep="–")) + tables
    return ("<h3>Classifiers compared</h3><p>Which classifier is the more reproducible under "
            "each source alone: difference a − b in disagreement and in run-to-run accuracy SD "
            f"({how}); below 0, a is the more reproducible.</p><ul>"
            + "".join(f"<li>{html.escape(t)}</li>" for t in said) + "</ul>" + tables)


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
            + folded("the table", shown.to_html(index=False, float_format=lambda x: f"{x:.3g}",
                                                na_rep="–")))


def folded(title: str, body: str) -> str:
    """A section shown by its title, opened by a click (the page reads top-down: sentences
    and figures first, tables folded below them)."""
    return f"<details><summary><b>{html.escape(title)}</b></summary>{body}</details>"


#: the Findings page's table sections, folded under their titles
FOLDED = ("Each source alone against all combined", "Sources of variance, one at a time",
          "Over datasets", "Variance components over the factorial grid",
          "Seed 004's stated findings, checked on this run", "Realised perturbation strength",
          "Where the runs ran", "Every claim with a test")


def _fold_tables(parts: list[str]) -> list[str]:
    """Each section whose heading is one of :data:`FOLDED`, folded: the part that opens with
    the heading and the parts after it up to the next heading."""
    out: list[str] = []
    section: list[str] | None = None
    for part in parts:
        match = re.match(r"<h3>(.*?)</h3>(.*)", part, re.S)
        if match or part == "</div>":
            if section is not None:
                out.append(folded(section[0], "".join(section[1:])))
                section = None
            if match and html.unescape(match.group(1)) in FOLDED:
                section = [html.unescape(match.group(1)), match.group(2)]
                continue
        if section is not None:
            section.append(part)
        else:
            out.append(part)
    if section is not None:
        out.append(folded(section[0], "".join(section[1:])))
    return out


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


def blocks_html(blocks: pd.DataFrame) -> str:
    """The Findings page's account of a sequential study's rounds: one line, the blocks'
    lines folded under it."""
    low, high = int(blocks["repeats"].min()), int(blocks["repeats"].max())
    used = f"{low}" if low == high else f"{low} to {high}"
    still = int((blocks["status"] == stopping.OPEN).sum())
    return ('<details class="modelvar-blocks"><summary><b>A sequential study:</b> '
            f"{used} repeats per dataset × classifier, added in rounds while its claims were "
            "open (config <code>sequential</code>); "
            + (f"{len(blocks) - still} of {len(blocks)} stopped, {still} still open"
               if still else f"all {len(blocks)} stopped")
            + ". Per dataset × classifier, why:</summary><ul>"
            + "".join(f"<li>{html.escape(t)}</li>" for t in stopping.block_lines(blocks))
            + "</ul></details>")


def findings_html(sources: pd.DataFrame, study: pd.DataFrame, components: pd.DataFrame,
                  study_components: pd.DataFrame, claims: pd.DataFrame, *, notes: list[str],
                  strength: pd.DataFrame, figures: dict[str, Path],
                  platforms: pd.DataFrame | None = None,
                  comparison: tuple[pd.DataFrame, pd.DataFrame] | None = None,
                  margins: pd.DataFrame | None = None,
                  dose: pd.DataFrame | None = None, combined: pd.DataFrame | None = None,
                  adequacy: list[str] | None = None, multiplicity=None,
                  blocks: pd.DataFrame | None = None, leaders: pd.DataFrame | None = None,
                  every_claim: pd.DataFrame | None = None,
                  captions: dict[str, str] | None = None) -> str:
    """The Findings page (module docstring): sentences, the headline figures (embedded, each
    under its title with its caption, ``captions``: title → text, above the per-dataset
    sentences), the
    sources, variance-components and claims tables, and notes; a sequential study's repeats
    per dataset × classifier and why each stopped (``blocks``); every claim with a test, each
    in a sentence of its own with its tier and adjusted p (``every_claim``,
    :func:`claim_sentences`)."""
    parts = [STYLE, '<div class="modelvar-findings"><h2 id="findings">Findings</h2>']
    if blocks is not None and not blocks.empty:
        parts.append(blocks_html(blocks))
    shown = "".join(
        f"<figure><h3>{html.escape(title)}</h3>{_image(path, title)}"
        + (f"<figcaption>{html.escape(captions[title])}</figcaption>"
           if title in (captions or {}) else "") + "</figure>"
        for title, path in figures.items())
    parts.append(_sentences_html(sources, components, margins, combined=combined,
                                 adequacy=adequacy, multiplicity=multiplicity,
                                 leaders=leaders, shown_figures=shown))
    if comparison is not None and not comparison[0].empty:
        parts.append(comparison_html(*comparison))
    if dose is not None and not dose.empty:
        parts.append(dose_html(dose))
    if combined is not None and not combined.empty:
        shown = combined[["dataset", "classifier", "level"]].rename(
            columns={"level": "source alone"})
        shown["alone"] = [fmt(v) for v in combined["alone"]]
        shown["all combined"] = [fmt(v) for v in combined["combined"]]
        shown["ratio"] = [_ratio_text(row, "").strip() or "–" for _, row in combined.iterrows()]
        shown["alone − combined"] = [signed_ci(v, lo, hi) for v, lo, hi in zip(
            combined["difference"], combined["difference_low"], combined["difference_high"],
            strict=True)]
        shown["verdict"] = [COMBINED_WORDS.get(v) or verdict_shown(v, lo, hi) for v, lo, hi in zip(
            combined["verdict"], combined["difference_low"], combined["difference_high"],
            strict=True)]
        parts.append("<h3>Each source alone against all combined</h3><p>Summers &amp; Dinneen "
                     "(ICML 2021) found that for neural networks any single source of "
                     "nondeterminism gives about as much prediction variability as all sources "
                     "together. Here, per dataset and classifier: each source alone against the "
                     "factorial cell with every source at once, in disagreement: the ratio "
                     "alone / combined (geometric mean of the per-repeat ratios, 95 % interval), "
                     "<i>about as much</i> where it lies within the equivalence margin, and the "
                     "difference paired over repeats (95 % interval).</p>"
                     + shown.to_html(index=False))
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
                     "variance of run accuracy and of per-repeat percent agreement of each "
                     "factor: ANOVA estimators of the variance components of a mixed model "
                     "(the families fixed, the repeat random), which estimate 0 for a factor "
                     "without effect whatever its degrees of freedom, with 95 % jackknife "
                     "intervals over repeats; a negative estimate shows as 0.</p>")
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
    claims_title = ("<h3>Seed 004's stated findings, checked on this run</h3><p>Exploratory "
                    "claims (false-discovery-rate control). <i>supported</i>: every comparison "
                    "a claim rests on is above 0 under the page's control; <i>contradicted</i>: "
                    "one went the other way (the numbers name it) — a seed claim can be "
                    "contradicted on one measure while a sentence above states a leading "
                    "source on another; <i>inconclusive</i>: neither holds; <i>not tested</i>: "
                    "the run lacks the levels it needs.</p>")
    if claims.empty:
        parts.append(claims_title + "<p>–</p>")
    else:
        rows = []
        for _, c in claims.iterrows():
            cls = c["status"].replace(" ", "-")
            rows.append(f"<tr><td>{html.escape(c['dataset'])}</td><td>"
                        f"{html.escape(c['classifier'])}</td><td>{html.escape(c['statement'])}"
                        f'</td><td class="{cls}">{c["status"]}</td><td>'
                        f"{html.escape(c['evidence'])}</td></tr>")
        parts.append(claims_title + "<table><tr><th>dataset</th><th>classifier</th><th>claim"
                     "</th><th>status</th><th>numbers</th></tr>" + "".join(rows) + "</table>")
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
    if every_claim is not None and not every_claim.empty:
        left_out = every_claim.attrs.get("left_out", 0)
        parts.append("<h3>Every claim with a test</h3><p>Each headline claim, and each "
                     "exploratory claim that holds, in a sentence of its own: its tier "
                     "(headline: family-wise control; exploratory: false-discovery-rate "
                     "control), its p-value (the smallest of its hypotheses'), its adjusted "
                     "p-value (it holds where that is at most 5 %), the bound its p faced on "
                     "this page, and where it does not hold how many repeats (datasets) would "
                     "give 80 % power at that bound if the effect is as large as seen."
                     + (f" The {left_out} exploratory claim{'s' * (left_out != 1)} that "
                        f"{'do' if left_out != 1 else 'does'} not hold "
                        f"{'are' if left_out != 1 else 'is'} in "
                        "<code>aggregated/study/verdicts.parquet</code>." if left_out else "")
                     + "</p>" + every_claim.to_html(index=False, na_rep="–", escape=True))
    if notes:
        parts.append("<h3>Notes</h3><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes)
                     + "</ul>")
    parts.append("</div>")
    return "\n".join(_fold_tables(parts))


def dataset_summary_html(dataset: str, summary: pd.DataFrame, agreement: pd.DataFrame,
                         roles: dict[str, dict[str, tuple]]) -> str:
    """Per cell and classifier: accuracy, within-repeat SD, global EC and percent agreement,
    each the mean over repeats with a 95 % t-interval, and identical repeats."""
    from modelvar.findings.sources import mean_ci
    from modelvar.study.cells import cell_label

    rows = []
    s = summary[summary["subset"] == "all"]
    for (classifier, cell), part in s.groupby(["classifier", "cell"], sort=True,
                                              observed=True):
        row = {"classifier": classifier, "cell": cell_label(str(cell)),
               "design": ", ".join(roles.get(str(classifier), {}).get(str(cell), ()))}
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


def claim_sentences(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Every headline claim and every exploratory claim that holds, from the ``verdicts``
    table, each in a sentence of its own (its kind's ``says``, :mod:`modelvar.findings.kinds`),
    headline claims first, with its tier, p-value, adjusted p-value, the bound its p faced, and
    the repeats (datasets) a claim that does not hold would need for 80 % power at that bound.
    The exploratory claims that do not hold (a full study has thousands) are left to the
    verdicts table; ``attrs["left_out"]`` counts them."""
    from modelvar.findings.kinds import kind

    verdicts = tables.get("verdicts")
    if verdicts is None or verdicts.empty:
        return pd.DataFrame()
    shown = verdicts[(verdicts["tier"] == "headline") | verdicts["holds"].astype(bool)]
    rows = []
    for _, claim in shown.iterrows():
        row = tables[claim["table"]].loc[claim["row"]]
        needed = claim["needed"]
        rows.append({"tier": claim["tier"],
                     "claim": kind(claim["kind"]).says(row, claim["verdict"],
                                                       float(claim["p_bound"])),
                     "p": f"{claim['p_value']:.2g}", "adjusted p": f"{claim['p_adjusted']:.2g}",
                     "bound": f"{claim['p_bound']:.2g}",
                     "would need": (repeats_phrase(int(needed)).removeprefix("about ")
                                    .replace("repeats", claim["unit"])
                                    if np.isfinite(needed) else "–")})
    out = pd.DataFrame(rows, columns=["tier", "claim", "p", "adjusted p", "bound",
                                      "would need"])
    order = {"headline": 0, "exploratory": 1}
    out = out.sort_values("tier", key=lambda t: t.map(order), kind="stable")
    out.attrs["left_out"] = len(verdicts) - len(shown)
    return out
