"""Claim kinds declared once (issue 64, item 7): a kind registered in one place is followed
through the page, the calibration and a sequential study; an undeclared kind is an error
everywhere; no module branches on a kind's name."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from conftest import REPO
from modelvar.calibration import pages as calibration
from modelvar.findings import kinds as registry
from modelvar.findings.paired import (
    CONTRADICTED,
    INCONCLUSIVE,
    SUPPORTED,
    between_cells,
)
from modelvar.findings.sources import alone


# ------------------------------------------------------------------ a kind of our own
def _shift_test(ctx: registry.Context, tables) -> pd.DataFrame:
    """Each source alone against the control in mean accuracy, paired over repeats."""
    rows = []
    for (dataset, classifier), part in ctx.sources.groupby(["dataset", "classifier"]):
        control = part[part["source"] == "control"]
        if control.empty:
            continue
        for _, single in alone(part).iterrows():
            c = between_cells(ctx.values, dataset, classifier, single["cell"],
                              control["cell"].iloc[0], "accuracy", "alone − control")
            rows.append({"dataset": dataset, "classifier": classifier,
                         "source": single["source"], "level": single["level"],
                         "cell": single["cell"], "measure": "accuracy",
                         "difference": c.difference.mean, "difference_low": c.difference.low,
                         "difference_high": c.difference.high,
                         "p_difference": c.difference.p_value, "effect": c.difference.effect,
                         "verdict": INCONCLUSIVE})
    return pd.DataFrame(rows)


def _shift_verdict(row, held) -> str:
    if "p_difference" in held:
        return SUPPORTED if row["difference"] > 0 else CONTRADICTED
    return INCONCLUSIVE


def _shift_score(scenario: calibration.Scenario):
    def score(row, verdict, truth, tables) -> tuple[bool, bool]:
        true = scenario.effect[row["source"]]  # the source's effect on mean accuracy
        false = (verdict == SUPPORTED and not true > 0) or \
            (verdict == CONTRADICTED and not true < 0)
        return true != 0, false
    return score


@pytest.fixture
def accuracy_shift():
    kind = registry.register(registry.ClaimKind(
        "accuracy shift", title="sources that shift mean accuracy", table="accuracy_shifts",
        test=_shift_test, hypotheses=("p_difference",), verdict=_shift_verdict,
        about=lambda r: f"accuracy: {r['level']}",
        says=lambda r, v, bound: f"On {r['dataset']}, {r['level']} shifted {r['classifier']}'s "
                                 f"mean accuracy: {v}.",
        score=_shift_score(calibration.SCENARIOS["planted"]), scenario="planted",
        tier=registry.EXPLORATORY, room=None,
        drawn=registry.Drawing("difference", "difference_low", "difference_high",
                               panel="measure", row="level", axis="accuracy, alone − control",
                               part="one-at-a-time")))
    yield kind
    registry.unregister(kind.name)
    assert kind.name not in [k.name for k in registry.kinds()]


def _page(seed: int = 1, repeats: int = 6):
    return calibration.simulate_page(calibration.SCENARIOS["planted"], repeats=repeats,
                                     rng=np.random.default_rng(seed))


def test_a_new_kind_is_followed_through_the_page(accuracy_shift, tmp_path):
    from modelvar.findings.report import claim_sentences, findings_html, multiplicity_line
    from modelvar.findings.sources import study_sources
    from modelvar.findings.study import judge_study

    tables, _ = _page()
    judged = judge_study(tables["summary"], tables["agreement"], tables["runs"],
                         tables["roles"], weak_below=0.5)
    t = judged.tables
    shifts = t["accuracy_shifts"]
    mine = t["verdicts"][t["verdicts"]["kind"] == "accuracy shift"]
    # every row a claim, in the exploratory family with the other exploratory claims
    assert len(mine) == len(shifts) > 0 and set(mine["tier"]) == {"exploratory"}
    assert set(shifts["tier"]) == {"exploratory"} and shifts["p_adjusted"].notna().all()
    # the planted training fraction's 0.05 effect on mean accuracy is found on every page
    down = shifts[shifts["source"] == "downsample"]
    assert (down["verdict"] == SUPPORTED).all()
    # each claim's verdict written back to its row
    assert (shifts.loc[mine["row"], "verdict"].to_numpy() == mine["verdict"].to_numpy()).all()
    exploratory = judged.multiplicity.tier("exploratory")
    assert "sources that shift mean accuracy" in exploratory.kinds
    assert "sources that shift mean accuracy" in multiplicity_line(judged.multiplicity)
    # its sentence in the page's list of every claim, and on the page
    said = claim_sentences(t)
    assert any(s.startswith("On d0, 50 % train shifted a's mean accuracy: supported.")
               for s in said["claim"])
    page = findings_html(t["sources"], study_sources(t["sources"]), t["components"],
                         t["study_components"], t["claims"], notes=[],
                         strength=pd.DataFrame(), figures={}, every_claim=said,
                         multiplicity=judged.multiplicity)
    assert "50 % train shifted a" in page and "Every claim with a test" in page
    # its figure: declared for a design with the cells its table needs, each claim one mark
    # with its interval, ringed where it holds
    from modelvar.findings.figures import findings_figures, verdict_figures
    from modelvar.plots.verdicts import verdict_caption, verdict_figure

    assert "verdicts_accuracy_shift" in verdict_figures("one-at-a-time", 1)
    assert "verdicts_accuracy_shift" not in verdict_figures("factorial", 1)
    assert "verdicts_accuracy_shift" in findings_figures("both", ["a", "b"], {}, datasets=1)
    marks = verdict_figure(accuracy_shift, shifts, t["verdicts"],
                           [tmp_path / "shift.png", tmp_path / "shift.csv"])
    assert len(marks) == len(mine)
    holding = mine.set_index("row")["holds"]
    assert marks["holds"].tolist() == [bool(holding[i]) for i in marks["table_row"]]
    assert marks["holds"].any() and (marks["low"] >= marks["axis_low"]).all() \
        and (marks["high"] <= marks["axis_high"]).all()
    assert "ringed" in verdict_caption(accuracy_shift, shifts, t["verdicts"]).lower()


def test_a_new_kind_is_scored_by_the_calibration(accuracy_shift):
    scored = calibration.run_pages("planted", pages=2, repeats=6, seed=3)
    mine = scored[scored["kind"] == "accuracy shift"]
    assert len(mine) and (mine["tier"] == "exploratory").all()
    rates = calibration.rates(scored)
    assert rates["false per accuracy shift"] == 0
    # the planted training fraction (0.05 on mean accuracy) is found: a quarter of the sources
    # that act; the others' effects (0.004–0.01) are too small for 6 repeats
    assert rates["power accuracy shift"] >= 0.25


def test_a_new_kind_is_judged_in_a_sequential_study(accuracy_shift):
    from modelvar.findings.study import judge_sequential
    from modelvar.study.rounds import Block, Rounds, Schedule

    tables, _ = _page(repeats=6)
    schedule = Schedule(3, 3, 9)
    rounds = Rounds(2, {name: Block(6, [3, 6]) for name in Rounds.first(
        schedule, tables["roles"]).blocks}, schedule)
    judged = judge_sequential(tables["summary"], tables["agreement"], tables["runs"],
                              tables["roles"], rounds, weak_below=0.5)
    verdicts = judged.tables["verdicts"]
    mine = verdicts[verdicts["kind"] == "accuracy shift"]
    # its p is sequential: at least its p on all the repeats (a look pays for the others)
    assert len(mine) and (mine["p_value"] >= np.minimum(mine["p_look"], 1) - 1e-15).all()
    assert mine["look"].isin([3, 6]).all()
    # it is not made once: an open one keeps its block open under sequential.decide: all
    blocks = judged.tables["blocks"]
    assert (blocks["claims"] > 0).all()


def test_an_undeclared_kind_is_an_error_everywhere():
    from modelvar.findings.sequential import sequential_status
    from modelvar.study.rounds import Block, Rounds, Schedule

    with pytest.raises(ValueError, match="claim kind 'hunch' is not declared"):
        registry.kind("hunch")
    verdicts = pd.DataFrame([{"kind": "hunch", "blocks": ["d|a"], "holds": False,
                              "effect": 1.0, "room": np.nan, "margin_sds": np.nan,
                              "unit": "repeats", "p_look": 0.2, "p_bound": 0.01,
                              "p_value": 0.2}])
    with pytest.raises(ValueError, match="claim kind 'hunch' is not declared"):
        sequential_status(verdicts, Rounds(1, {"d|a": Block(3, [3])}, Schedule(3, 3, 9)))
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.kind("leader"))
    with pytest.raises(ValueError, match="is built in"):
        registry.unregister("leader")


def test_every_kind_names_a_calibration_scenario_and_a_table_the_workflow_declares():
    from modelvar.planning.outputs import FINDINGS_TABLES

    for kind in registry.kinds():
        assert kind.scenario in calibration.SCENARIOS, kind.name
        assert kind.table in FINDINGS_TABLES, kind.name
        assert kind.tier_of(registry.Context(pd.DataFrame({"dataset": ["d"]}), pd.DataFrame(),
                                             None, pd.DataFrame(), 0.5, 1.25)) in (
            registry.HEADLINE, registry.EXPLORATORY)
    # the headline tier holds what a reader takes into a paper (issue 64)
    headline = {k.name for k in registry.kinds() if k.tier == registry.HEADLINE}
    assert {"leader", "largest share", "classifiers over datasets", "leader over datasets",
            "largest share over datasets"} <= headline


# ------------------------------------------------------------------ no branches on a name
def _branches(text: str, names) -> list[str]:
    name = "|".join(re.escape(n) for n in names)
    pattern = re.compile(rf"""kind\W{{0,12}}(?:==|!=|\bin\b)[^\n]{{0,60}}["'](?:{name})["']""")
    return [m.group(0) for m in pattern.finditer(text)]


def test_no_module_branches_on_a_kinds_name():
    names = [k.name for k in registry.BUILT_IN]
    found = []
    for path in (REPO / "src").rglob("*.py"):
        if path.name == "kinds.py":
            continue
        found += [f"{path.relative_to(REPO)}: {b}" for b in _branches(path.read_text(), names)]
    assert found == []


def test_the_branch_scan_finds_the_branches_of_before():
    names = [k.name for k in registry.BUILT_IN]
    assert _branches('    if kind == "leader":', names)
    assert _branches('    if kind in ("classifiers", "combined"):', names)
    assert _branches('        table.loc[i, "p_value" if claim["kind"] != "largest share" '
                     'else "lead_p"]', names)
    assert not _branches('    rows.append({"leader": lead["level"]})', names)
