"""A sequential study (issues 56, 68): repeats added in rounds where claims are open, with error
control that holds under optional stopping (modelvar.study.looks, .stopping, .rounds,
.claim_paths; modelvar.findings.sequential; modelvar.planning.rounds; scripts/run.sh's
rounds)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from conftest import CONFIGS, REPO, dry_run_jobs, manifest_of, snakemake
from modelvar.calibration import pages as calibration
from modelvar.calibration import sequential as sequential_calibration
from modelvar.study import looks
from modelvar.study.claim_paths import simulate
from modelvar.study.rounds import (
    Block,
    Futility,
    Rounds,
    Schedule,
    design_problem,
    findings_state,
    read_rounds,
)
from modelvar.study.stopping import (
    AT_MAX,
    DECIDED,
    FUTILE,
    OPEN,
    OVER_BUDGET,
    advance,
    block_status,
    conditional_power,
    design_effect,
)


# ------------------------------------------------------------------ the looks
def test_the_schedule_lists_its_looks():
    schedule = Schedule(3, 3, 10)
    assert schedule.looks() == (3, 6, 9, 10)
    assert (schedule.next(6), schedule.next(9), schedule.next(10)) == (9, 10, None)
    assert Schedule(5, 5, 30).looks() == (5, 10, 15, 20, 25, 30)
    assert Schedule(4, 4, 4).looks() == (4,)


def test_the_boundaries_are_the_published_ones_and_spend_what_they_say(monkeypatch):
    """The numerical integration of the looks' joint distribution reproduces the published
    O'Brien–Fleming-type boundaries (5 equally spaced looks, two-sided 0.05, the level spent
    per side as 2 − 2Φ(z_{1−α/4}/√t): 4.877, 3.357, 2.680, 2.290, 2.031; Jennison & Turnbull
    2000, table 7.5; R's ldbounds); the schedule's own (Hwang–Shih–DeCani, γ = −3) crosses,
    on 400,000 simulated z paths, at each look with the probability its spending gives it; a
    single look is the fixed test."""
    fractions = np.arange(1, 6) / 5
    ours = looks.boundaries(0.05, fractions)
    assert looks.boundaries(0.05, [1.0]) == pytest.approx([1.959964], abs=1e-6)
    rng = np.random.default_rng(68)
    z = np.cumsum(rng.standard_normal((400_000, 5)), axis=1) / np.sqrt(np.arange(1, 6))
    crossed = np.abs(z) >= ours
    first = np.where(crossed.any(axis=1), crossed.argmax(axis=1), -1)
    spent = [looks.hwang_shih_decani(0.05, t) for t in fractions]
    increments = np.diff([0.0, *spent])
    for k in range(5):
        got = (first == k).mean()
        assert got == pytest.approx(increments[k], abs=4 * math.sqrt(increments[k] / 400_000))
    monkeypatch.setitem(looks.SPENDINGS, "O'Brien-Fleming-type", lambda a, t: 0.0 if t <= 0
                        else float(min(a, 4 - 4 * stats.norm.cdf(stats.norm.isf(a / 4)
                                                                / math.sqrt(t)))))
    assert looks.boundaries(0.05, fractions, "O'Brien-Fleming-type") == pytest.approx(
        [4.8769, 3.3569, 2.6803, 2.2898, 2.0310], abs=2e-4)
    with pytest.raises(ValueError, match="spending function 'linear' is none of"):
        looks.boundaries(0.05, fractions, "linear")


def _null_paths(n: int, looks_at: tuple[int, ...], seed: int, tails=None) -> np.ndarray:
    """Paired t-tests' p-values at each look of ``n`` paths of per-repeat differences with no
    effect (rows: paths, columns: looks)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, max(looks_at))) if tails is None else \
        rng.standard_t(tails, (n, max(looks_at)))
    out = []
    for k in looks_at:
        mean, sd = x[:, :k].mean(axis=1), x[:, :k].std(axis=1, ddof=1)
        out.append(2 * stats.t.sf(np.abs(mean) / (sd / np.sqrt(k)), k - 1))
    return np.column_stack(out)


def _stars(p: np.ndarray, looks_at: tuple[int, ...]) -> np.ndarray:
    return np.min([looks.levels_of(p[:, k], n, looks_at) for k, n in enumerate(looks_at)],
                  axis=0)


@pytest.mark.parametrize("looks_at", [(3, 6, 9, 12, 15, 18, 21, 24, 27, 30), (5, 10, 30)])
def test_a_sequential_p_value_keeps_its_level_whatever_look_the_study_stops_at(looks_at):
    """Under the null, P(p* ≤ α) ≤ α with a look at every round (the study may stop at any)
    for paired t-tests from 3 repeats (the t allowance: without it the exact z-boundaries let
    the t-tests' nulls cross ~5 % more often than α); the naive rule — the smallest p of any
    look — is what the boundaries prevent."""
    p = _null_paths(40_000, looks_at, seed=68)
    star = _stars(p, looks_at)
    for alpha in (0.05, 0.01):
        error = 2 * math.sqrt(alpha * (1 - alpha) / len(star))
        assert (star <= alpha).mean() <= alpha + error
    assert (star <= 0.05).mean() >= 0.04  # exact boundaries: little of the level is lost
    assert (p.min(axis=1) <= 0.05).mean() > 0.12  # optional stopping without spending
    assert looks.t_allowance(looks_at) > 1.0 and looks.t_allowance((30,)) == 1.0
    # the decisive look is the one of the smallest level; a single look is the t-test
    first, second = looks_at[:2]
    value, look = looks.sequential_p({first: 1e-6, second: 0.3}, looks_at)
    assert look == first and value == pytest.approx(looks.levels_of([1e-6], first,
                                                                    looks_at)[0])
    with pytest.raises(ValueError, match="4 repeats is not a planned look"):
        looks.levels_of([0.01], 4, looks_at)
    assert looks.sequential_p({30: 0.02}, (30,)) == (pytest.approx(0.02, rel=1e-6), 30)
    assert looks.sequential_p({}, looks_at) == (np.inf, None)


def test_heavy_tails_keep_the_level_too():
    looks_at = (3, 6, 9, 12, 15, 18, 21, 24, 27, 30)
    star = _stars(_null_paths(20_000, looks_at, seed=3, tails=3), looks_at)
    assert (star <= 0.05).mean() <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 20_000)


# ------------------------------------------------------------------ stopping
def test_conditional_power_is_the_chance_of_a_verdict_by_the_last_look():
    """The closed form against simulated futures: n = 9 of 30 repeats seen at an effect of
    0.3 SDs, the rest drawn at the effect of interest; told apart at the last look's
    boundary, or (a tie) called equivalent at the one-sided one."""
    schedule, futility = Schedule(3, 3, 30), Futility(0.6, 0.1)
    rng = np.random.default_rng(1)
    b = looks.final_boundary(0.05, schedule.looks())
    future = 0.6 + rng.standard_normal((200_000, 21))
    total = 9 * 0.3 + future.sum(axis=1)
    simulated = (np.abs(total) / math.sqrt(30) >= b).mean()
    got = conditional_power(effect=0.3, room=np.nan, margin=np.nan, p_look=np.nan, n=9,
                            level=0.05, schedule=schedule, futility=futility)
    assert got == pytest.approx(simulated, abs=0.005)
    # equivalence: a margin of 1 SD, the mean 0.2 SD from 0, a tie to come
    b1 = looks.final_boundary(0.05, schedule.looks(), sides=1)
    mean = (9 * 0.2 + rng.standard_normal((200_000, 21)).sum(axis=1)) / 30
    simulated = ((1 - np.abs(mean)) * math.sqrt(30) >= b1).mean()
    margin = Futility("margin", 0.1)
    got = conditional_power(effect=0.0, room=0.8, margin=1.0, p_look=np.nan, n=9, level=0.05,
                            schedule=schedule, futility=margin)
    assert got == pytest.approx(simulated, abs=0.005)
    # no looks left, no level: no power; the design effect gives 80 % from the start
    assert conditional_power(effect=3.0, room=np.nan, margin=np.nan, p_look=np.nan, n=30,
                             level=0.05, schedule=schedule, futility=futility) == 0
    theta = design_effect(0.05, schedule)
    start = conditional_power(effect=theta, room=np.nan, margin=np.nan, p_look=np.nan, n=0.001,
                              level=0.05, schedule=schedule, futility=margin)
    assert start == pytest.approx(0.8, abs=0.01)


def _claim(block, holds, effect, *, room=np.nan, margin=np.nan, bound=0.01, p=0.2):
    return {"blocks": [f"d|{block}"], "holds": holds, "effect": effect, "room": room,
            "margin_sds": margin, "p_bound": bound, "p_look": p}


def test_a_block_stops_decided_futile_at_its_maximum_or_as_recorded():
    schedule = Schedule(4, 4, 12)
    rounds = Rounds(2, {f"d|{c}": Block(8, [4, 8]) for c in ("done", "open", "far")},
                    schedule)
    rounds.blocks["d|max"] = Block(12, [4, 8, 12])
    rounds.blocks["d|kept"] = Block(4, [4], stopped=DECIDED, stopped_round=1)
    claims = pd.DataFrame([
        _claim("done", True, 3.0), _claim("open", False, 1.0), _claim("far", False, 0.02),
        _claim("max", False, 2.0), _claim("kept", False, 2.0)])
    status = block_status(claims, rounds)
    got = dict(zip(status["classifier"], status["status"], strict=True))
    assert got == {"done": DECIDED, "open": OPEN, "far": FUTILE, "max": AT_MAX,
                   "kept": DECIDED}
    row = status.set_index("classifier").loc["far"]
    assert (row["open_claims"], row["futile_claims"]) == (1, 1) and row["best_power"] < 0.1
    # the same claim with a large margin to find a tie in is not futile: equivalence is near
    near = claims.copy()
    near.loc[2, ["room", "margin_sds"]] = [1.4, 1.5]
    assert block_status(near, rounds).set_index("classifier").loc["far", "status"] == OPEN
    # a stated effect of interest: at 2 SDs the weak claim could still be told apart
    strong = rounds.with_rule("all", Futility(2.0, 0.1))
    assert block_status(claims, strong).set_index("classifier").loc["far", "status"] == OPEN
    never = rounds.with_rule("all", Futility("margin", 0.0))
    assert block_status(claims, never).set_index("classifier").loc["far", "status"] == OPEN


def test_the_next_round_records_stops_and_the_findings_see_the_round_as_it_began():
    schedule = Schedule(3, 3, 9)
    config = {"sequential": {"enabled": True, "step": 3, "max_repeats": 9, "decide": "all",
                             "effect_of_interest": "margin", "futility_below": 0.1},
              "split": {"repeats": 3}}
    rounds = Rounds.first(schedule, [("d", "a"), ("d", "b")])
    before = findings_state(config, rounds, [])
    step = advance(rounds, {"d|a": DECIDED, "d|b": OPEN})
    assert step.another and rounds.round == 2
    assert (rounds.blocks["d|a"].stopped, rounds.blocks["d|a"].stopped_round) == (DECIDED, 1)
    assert rounds.blocks["d|b"].looks == [3, 6]
    # round 2's findings see a's stop; its own stops, recorded after, rerun nothing
    state = findings_state(config, rounds, [])
    assert json.loads(state)["blocks"]["d|a"]["stopped"] == DECIDED and state != before
    last = advance(rounds, {"d|a": DECIDED, "d|b": FUTILE})
    assert not last.another and rounds.round == 2
    assert rounds.blocks["d|b"].stopped == FUTILE
    assert findings_state(config, rounds, []) == state
    assert Rounds.from_json(rounds.to_json()) == rounds
    # a budget that the next round would pass: every open block stops, one more run says so
    spend = Rounds.first(schedule, [("d", "a")])
    said = advance(spend, {"d|a": OPEN}, cost_of_round=lambda opens: 100.0,
                   budget_seconds=150.0, spent_seconds=60.0)
    assert said.another and spend.blocks["d|a"].stopped == OVER_BUDGET
    assert spend.blocks["d|a"].repeats == 3 and spend.round == 2
    assert "past the budget" in said.lines[0]


def test_a_round_run_by_snakemake_alone_says_how_to_go_on(tmp_path):
    """A user who runs Snakemake without scripts/run.sh gets one round; its summary says per
    block why it stopped and, while blocks are open, what runs the next rounds."""
    from modelvar.planning.outputs import sequential_lines

    schedule = Schedule(4, 4, 12)
    rounds = Rounds(1, {"d|a": Block(4, [4]), "d|b": Block(4, [4])}, schedule)
    claims = pd.DataFrame([_claim("a", True, 3.0), _claim("b", False, 1.0)])
    folder = tmp_path / "aggregated" / "study"
    folder.mkdir(parents=True)
    block_status(claims, rounds).to_parquet(folder / "blocks.parquet")
    lines = sequential_lines(tmp_path)
    assert lines[0].startswith("d, a: 4 repeats (looks at 4); stopped, decided: all 1 of")
    assert "d, b: 4 repeats (looks at 4); open, more repeats in the next round" in lines[1]
    assert "scripts/run.sh runs the rounds to the end" in lines[-1]
    claims.loc[1, "holds"] = True
    block_status(claims, rounds).to_parquet(folder / "blocks.parquet")
    assert not any("run.sh" in line for line in sequential_lines(tmp_path))
    assert sequential_lines(tmp_path / "none") == []


def test_the_state_reads_back_and_a_damaged_one_says_how_to_recover(tmp_path):
    rounds = Rounds(2, {"vehicle|xgb": Block(8, [4, 8]),
                        "vehicle|lr-sgd": Block(4, [4], DECIDED, 1)}, Schedule(4, 4, 12),
                    "leaders", Futility(0.5, 0.2))
    assert Rounds.from_json(rounds.to_json()) == rounds
    assert Rounds.from_json(rounds.to_json(compact=True)) == rounds
    assert read_rounds(tmp_path) is None
    (tmp_path / "sequential").mkdir()
    (tmp_path / "sequential" / "rounds.json").write_text('{"round": 2}')
    with pytest.raises(ValueError, match="not a sequential study's state.*delete it to start "
                                         "again"):
        read_rounds(tmp_path)


def _config(results: Path, **sequential) -> dict:
    return {"results_dir": str(results), "split": {"repeats": 3},
            "sequential": {"enabled": True, "step": 3, "max_repeats": 9, "decide": "all",
                           "effect_of_interest": "margin", "futility_below": 0.1,
                           **sequential}}


def test_the_schedule_cannot_move_after_data(tmp_path):
    """Recorded at round 1: a raised maximum, another step or a fixed design on the folder is
    refused, each saying what would be valid; the stopping rule (which claims decide, the
    futility rule) may change, being non-binding; a state written before the spending was
    recorded (issue 56's linear spending) cannot be continued by this one."""
    from modelvar.planning.rounds import write_rounds

    state = Rounds.first(Schedule(3, 3, 9), [("d", "a")])
    write_rounds(tmp_path, state)
    assert design_problem(_config(tmp_path)) is None
    assert design_problem(_config(tmp_path, decide="leaders", futility_below=0.3,
                                  effect_of_interest=1.0)) is None
    raised = design_problem(_config(tmp_path, max_repeats=30))
    assert "sequential.max_repeats 9" in raised and "sequential.max_repeats 30" in raised
    assert "Keep the recorded schedule, or start a new sequential study" in raised
    assert "reopen blocks" in raised
    assert "sequential.step 3" in design_problem(_config(tmp_path, step=2)) or \
        "sequential.step 2" in design_problem(_config(tmp_path, step=2))
    fixed = design_problem(_config(tmp_path, enabled=False))
    assert "study of fixed repeats" in fixed and "another results_dir" in fixed
    # a recorded spending this modelvar has goes on; issue 56's union bound cannot
    other = Rounds.first(Schedule(3, 3, 9, "O'Brien-Fleming-type"), [("d", "a")])
    write_rounds(tmp_path, other)
    assert design_problem(_config(tmp_path)) is None
    legacy = json.loads(state.to_json())
    del legacy["schedule"]["spending"]
    (tmp_path / "sequential" / "rounds.json").write_text(json.dumps(legacy))
    old = design_problem(_config(tmp_path))
    assert "linear (union bound) spending" in old and "Hwang-Shih-DeCani" in old


def test_a_last_look_before_the_first_round_is_refused():
    import yaml

    from modelvar.planning.config_check import ConfigProblems, check_config

    config = yaml.safe_load((CONFIGS / "sequential.yaml").read_text())
    config["sequential"]["max_repeats"] = 3
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    with pytest.raises(ConfigProblems, match=r"sequential.max_repeats: 3 is below the first "
                                             r"round's repeats \(split.repeats: 4\)"):
        check_config(config, schema)


# ------------------------------------------------------------------ simulated claims
def test_pages_of_nulls_keep_the_headline_rate_with_every_block_to_the_last_look():
    """Every block looked at up to 10 times and never stopped (the worst case: a sequential
    p-value only falls with more looks): pages of 1 and 5 blocks of ties, headline claims
    under Holm, keep the family-wise rate; planted effects of 1.5 SDs stop before the last
    look and are told apart."""
    schedule = Schedule(3, 3, 30)
    for blocks in (1, 5):
        page = sequential_calibration.page_of({0.0: blocks})
        paths = sequential_calibration.run_claims(*page, schedule=schedule, pages=400,
                                                  seed=blocks, stop="never")
        rates = sequential_calibration.claim_rates(paths, page[0], page[3])
        assert rates["headline: pages with a false claim"] <= 0.05 + 2 * math.sqrt(
            0.05 * 0.95 / 400)
    page = sequential_calibration.page_of({1.5: 2})
    strong = sequential_calibration.run_claims(*page, schedule=schedule, pages=100, seed=9)
    rates = sequential_calibration.claim_rates(strong, page[0], page[3])
    assert rates["power at 1.5"] >= 0.95 and rates["repeats at 1.5"] < 24


def test_futility_keeps_the_power_and_stops_what_cannot_be_decided():
    """Claims of 0.7 SDs keep their power under the futility rule (at least 0.95× the same
    design without it); differences of 0.1 SD with a margin too narrow to call them
    equivalent (0.2 SD), at a claim's level of 1 %, stop before the last look (the same
    claims without the rule run to it) and hold no less often."""
    schedule = Schedule(3, 3, 30)
    page = (np.full(3, 0.7), np.full(3, 0.5), np.zeros(3, int), np.full(3, "headline"))
    rates = {}
    for stop in ("rule", "no futility"):
        paths = sequential_calibration.run_claims(*page, schedule=schedule, pages=300,
                                                  seed=7, stop=stop)
        rates[stop] = sequential_calibration.claim_rates(paths, page[0], page[3])
    assert rates["rule"]["power at 0.7"] >= 0.95 * rates["no futility"]["power at 0.7"]
    hopeless = {stop: simulate(np.full(3, 0.1), np.full(3, 0.2), np.zeros(3, int), schedule,
                               Futility(), decide=lambda s: (s <= 0.01, np.full(s.shape, 0.01)),
                               pages=200, rng=np.random.default_rng(2), stop=stop)
                for stop in ("rule", "no futility")}
    assert hopeless["rule"].repeats.mean() < 26 <= hopeless["no futility"].repeats.mean()
    assert hopeless["rule"].holds.mean() == hopeless["no futility"].holds.mean()


# ------------------------------------------------------------------ the page's own code
def _judged(rounds, tables):
    from modelvar.findings.study import judge_sequential

    return judge_sequential(tables["summary"], tables["agreement"], tables["runs"],
                            tables["roles"], rounds, weak_below=0.5)


def test_one_look_is_the_fixed_study_and_later_looks_pay_for_the_earlier_ones():
    """A sequential study with a single look judges as the fixed study; with looks at 4 and 8
    each of a claim's hypotheses' p is the sequential p-value of the fixed study's p-values on
    the first 4 and 8 repeats (recomputed here look by look), the claim's the smallest."""
    from modelvar.findings.study import judge_study

    tables, _ = calibration.simulate_page(calibration.SCENARIOS["planted"], repeats=8,
                                          rng=np.random.default_rng(5))
    blocks = tables["roles"]

    def fixed(n):
        part = {k: t[t["repeat"] < n] for k, t in tables.items() if k != "roles"}
        return judge_study(part["summary"], part["agreement"], part["runs"], tables["roles"],
                           weak_below=0.5).tables["verdicts"].set_index("key")

    one = _judged(Rounds.first(Schedule(8, 8, 8), blocks), tables)
    at8 = fixed(8)
    got = one.tables["verdicts"].set_index("key")
    assert got["p_value"].to_numpy() == pytest.approx(at8.loc[got.index, "p_value"],
                                                      rel=1e-6)
    assert got["holds"].tolist() == at8.loc[got.index, "holds"].tolist()

    schedule = Schedule(4, 4, 8)
    rounds = Rounds(2, {name: Block(8, [4, 8]) for name in Rounds.first(schedule,
                                                                         blocks).blocks},
                    schedule)
    two = _judged(rounds, tables).tables["verdicts"].set_index("key")
    at4 = fixed(4)
    for key, row in two.iterrows():
        seen = {8: at8.loc[key, "p_values"]}
        if key in at4.index:
            seen[4] = at4.loc[key, "p_values"]
        stars, first = [], []
        for j, h in enumerate(row["hypotheses"]):
            ps = {n: p[j] for n, p in seen.items() if np.isfinite(p[j])}
            star, _ = looks.sequential_p(ps, (4, 8))
            stars.append(star if ps else np.nan)
            # a hypothesis that holds is decided at the first look that crosses its bound
            if h in row["held"]:
                first.append(looks.first_look(ps, (4, 8), row["p_bounds"][j]))
        assert row["p_values"] == pytest.approx(stars, rel=1e-12, nan_ok=True)
        assert row["p_value"] == pytest.approx(np.nanmin(stars), rel=1e-12)
        if row["holds"]:
            assert row["look"] == min(first)
    assert two["holds"].any()
    assert (two["p_value"] >= np.minimum(two["p_look"], 1) - 1e-15).all()


def test_comparisons_over_datasets_are_made_once_at_the_stop():
    """From 6 datasets the page compares the classifiers over datasets: that claim is made on
    each block's repeats at its stop (not per look) and keeps no block open."""
    tables, _ = calibration.simulate_page(calibration.SCENARIOS["planted"], repeats=6,
                                          datasets=6, rng=np.random.default_rng(6))
    schedule = Schedule(3, 3, 9)
    rounds = Rounds(2, {name: Block(6, [3, 6]) for name in Rounds.first(schedule, tables[
        "roles"]).blocks}, schedule)
    judged = _judged(rounds, tables)
    verdicts = judged.tables["verdicts"]
    over = verdicts[verdicts["kind"] == "classifiers over datasets"]
    assert len(over) and (over["p_value"] == over["p_look"]).all()
    study = judged.tables["study_comparison"]
    claims = study[study["source"] != "control"]
    assert claims["verdict"].isin(["supported", "contradicted", "inconclusive"]).all()
    assert (study.loc[study["source"] == "control", "verdict"] == "not tested").all()


def test_a_block_with_a_strong_planted_effect_stops_early_and_decided():
    """Rounds run by the Findings' own code on a planted page (the training fraction leads
    every block, by 1-11 SDs of its per-repeat differences), looks at 3, 6, …, 15, ``decide:
    leaders``: every block stops before its last look because its leading sources hold, and
    each one it states is the planted leader. Under ``all`` the blocks also wait for claims
    a planted leader says nothing about; the largest variance share, a test over few clusters,
    keeps no block open under ``leaders`` (before issue 68's close it did: blocks ran to 15).
    """
    from modelvar.findings.sequential import deciding_claims

    tables, truth = calibration.simulate_page(calibration.SCENARIOS["planted"], repeats=15,
                                              rng=np.random.default_rng(3))
    rounds = Rounds.first(Schedule(3, 3, 15), tables["roles"], "leaders")
    judged = sequential_calibration.play_rounds(tables, rounds)
    blocks = judged.tables["blocks"]
    assert set(blocks["status"]) == {DECIDED}
    assert (blocks["repeats"] < 15).all()
    verdicts = judged.tables["verdicts"]
    assert set(deciding_claims(verdicts, "leaders")["kind"]) == {"leader"}
    assert {"largest share", "classifiers"} <= set(deciding_claims(verdicts, "all")["kind"])
    scored = calibration.score(judged.tables, verdicts, truth)
    leaders = scored[scored["kind"] == "leader"]
    assert leaders["made"].sum() == len(leaders) and not leaders["false"].any()


# ------------------------------------------------------------------ the workflow
def _run_sh(*args, cwd, **kw):
    env = dict(os.environ, MODELVAR_VENV=str(Path(sys.executable).parents[1]))
    return subprocess.Popen(["bash", str(REPO / "scripts" / "run.sh"), *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def _fit_jobs(folder: Path) -> dict[str, float]:
    """The finished fit jobs (classifier/…+N.rR → their manifest's modification time)."""
    root = folder / "results" / ".modelvar" / "manifests" / "fit" / "vehicle"
    return {str(p.relative_to(root)): p.stat().st_mtime for p in root.rglob("*.json")}


def _repeats(job: str) -> list[tuple[str, int]]:
    """(classifier, repeat) of every repeat a fit job's manifest holds (``.rR``, ``.rA-B``)."""
    clf, name = job.split("/")
    found = re.search(r"\.r(\d+)(?:-(\d+))?\.json$", name)
    first = int(found.group(1))
    return [(clf, r) for r in range(first, int(found.group(2) or first) + 1)]


@pytest.mark.workflow
def test_a_sequential_study_runs_in_rounds_and_resumes_after_a_kill(tmp_path):
    """tests/configs/sequential.yaml through scripts/run.sh: round 1 fits 4 repeats of each
    block; lr-sgd's clear leader is decided at the first look, its other one is futile, and
    its block gets no more repeats; only xgb's open block gets repeats 4–7 (fit jobs
    counted); the run killed in round 2 resumes without refitting round 1; the run summary
    and the Findings page say per dataset × classifier the repeats used and why it stopped;
    the finished study's dry run has nothing to do (recording the last stops reruns no
    findings)."""
    shutil.copy(CONFIGS / "sequential.yaml", tmp_path / "seq.yaml")
    state = tmp_path / "results" / "sequential" / "rounds.json"
    proc = _run_sh("--configfile", "seq.yaml", "--cores", "2", cwd=tmp_path)
    try:
        deadline = time.time() + 480
        while time.time() < deadline and proc.poll() is None and not (
                state.is_file() and json.loads(state.read_text())["round"] == 2):
            time.sleep(0.5)
        assert state.is_file(), proc.communicate()[0] if proc.poll() is not None else ""
        round1 = _fit_jobs(tmp_path)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert sorted(p for j in round1 for p in _repeats(j) if p[1] < 4) == sorted(
        (c, r) for c in ("lr-sgd", "xgb") for r in range(4))
    rounds = read_rounds(tmp_path / "results")
    assert rounds.blocks["vehicle|lr-sgd"].repeats == 4
    assert rounds.blocks["vehicle|lr-sgd"].stopped == FUTILE
    assert rounds.schedule == Schedule(4, 4, 12) and rounds.futility == Futility(0.5, 0.2)
    assert (rounds.blocks["vehicle|xgb"].repeats, rounds.blocks["vehicle|xgb"].looks,
            rounds.blocks["vehicle|xgb"].stopped) == (8, [4, 8], None)
    verdicts = pd.read_parquet(tmp_path / "results" / "aggregated" / "study" /
                               "verdicts.parquet").set_index("key")
    strong = verdicts.loc["leader|vehicle|lr-sgd|disagreement: 25 % train"]
    assert bool(strong["holds"]) and strong["look"] == 4

    # round 2 fits xgb's repeats 4–7 and nothing else
    dry = snakemake(tmp_path, tmp_path / "seq.yaml", "-n")
    planned = [manifest_of(out).split("/fit/vehicle/")[1]
               for rule, _, out in dry_run_jobs(dry.stdout) if rule == "fit"]
    new = {p for j in planned for p in _repeats(j)} | {
        p for j in _fit_jobs(tmp_path) for p in _repeats(j) if p[1] >= 4}
    assert new == {("xgb", r) for r in range(4, 8)}
    assert all(p[1] >= 4 for j in planned for p in _repeats(j))

    resumed = _run_sh("--configfile", "seq.yaml", "--cores", "2", cwd=tmp_path)
    out = resumed.communicate(timeout=600)[0]
    assert resumed.returncode == 0, out
    after = _fit_jobs(tmp_path)
    assert {j: after[j] for j in round1} == round1  # round 1's fits are not redone
    final = read_rounds(tmp_path / "results")
    assert all(b.stopped for b in final.blocks.values())
    assert final.blocks["vehicle|lr-sgd"].looks == [4]
    assert {p for j in after if j.startswith("lr-sgd") for p in _repeats(j)} == {
        ("lr-sgd", r) for r in range(4)}
    xgb = final.blocks["vehicle|xgb"]
    assert {p[1] for j in after if j.startswith("xgb") for p in _repeats(j)} == set(
        range(xgb.repeats))
    summary = [line for line in out.splitlines() if line.strip().startswith("sequential:")]
    assert any(f"vehicle, lr-sgd: 4 repeats (looks at 4); stopped, "
               f"{final.blocks['vehicle|lr-sgd'].stopped}: " in line for line in summary), out
    assert any(f"vehicle, xgb: {xgb.repeats} repeats" in line for line in summary), out
    assert "could not be decided by 12 repeats even at the effect of interest" in out
    # nothing left to do: the stops recorded after the last round rerun no findings
    done = snakemake(tmp_path, tmp_path / "seq.yaml", "-n")
    assert "Nothing to be done" in done.stdout + done.stderr, done.stdout
    page = (tmp_path / "results" / "findings" / "findings.html").read_text()
    assert "open (config <code>sequential</code>); all 2 stopped." in page
    assert f"vehicle, lr-sgd: 4 repeats (looks at 4); stopped, " \
        f"{final.blocks['vehicle|lr-sgd'].stopped}" in page
    assert (tmp_path / "results" / "report.html").is_file()
    # with findings, the plan prices the open claims from them
    plan = _plan("--configfile", "seq.yaml", cwd=tmp_path)
    assert f"expected from round {final.round}'s findings" in plan


def _plan(*args, cwd) -> str:
    proc = subprocess.run([sys.executable, "-m", "modelvar", "plan", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_plan_prices_a_sequential_study_before_it_runs(tmp_path):
    """Its looks, the first round's CPU, the most it can take (every block to the last look)
    and, before any findings, what the stopping rule takes on the prior's mix."""
    out = _plan("--configfile", str(CONFIGS / "sequential.yaml"), cwd=tmp_path)
    line = re.search(r"sequential: looks at 4, 8, 12 repeats .*round 1: fits (\S+) min of CPU; "
                     r"every block to 12 repeats: (\S+) min", out)
    assert line, out
    # three times round 1's fits (the numbers are rounded to 0.1 min)
    assert float(line.group(2)) == pytest.approx(3 * float(line.group(1)), abs=0.2)
    prior = re.search(r"expected before any findings: (\S+) min \(a prior of (\S+) repeats "
                      r"per block", out)
    assert prior, out
    assert 4 <= float(prior.group(2)) <= 12
    assert float(prior.group(1)) == pytest.approx(
        float(line.group(2)) * float(prior.group(2)) / 12, abs=0.1)
