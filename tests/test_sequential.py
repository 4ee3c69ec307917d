"""A sequential study (issue 56): repeats added in rounds where claims are open, with error
control that holds under optional stopping (modelvar.study.rounds, modelvar.findings.
sequential, modelvar.planning.rounds, scripts/run.sh's rounds)."""

from __future__ import annotations

import json
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
from modelvar.findings.judging import needed_at
from modelvar.findings.sequential import (
    block_status,
    level_left,
    projected_repeats,
    sequential_p,
)
from modelvar.study.rounds import (
    AT_MAX,
    DECIDED,
    FUTILE,
    Block,
    Rounds,
    Schedule,
    read_rounds,
)


# ------------------------------------------------------------------ the looks
def test_the_looks_spend_the_level_linearly_and_all_of_it():
    schedule = Schedule(3, 3, 10)
    assert schedule.looks() == (3, 6, 9, 10)
    assert sum(schedule.share(n) for n in schedule.looks()) == pytest.approx(1.0, abs=1e-15)
    assert schedule.share(3) == pytest.approx(0.3) and schedule.share(10) == pytest.approx(0.1)
    assert (schedule.next(6), schedule.next(9), schedule.next(10)) == (9, 10, None)
    assert Schedule(5, 5, 30).looks() == (5, 10, 15, 20, 25, 30)
    assert Schedule(4, 4, 4).looks() == (4,) and Schedule(4, 4, 4).share(4) == 1.0
    with pytest.raises(ValueError, match="4 repeats is not a planned look"):
        schedule.share(4)


def _null_paths(n: int, looks: tuple[int, ...], seed: int) -> np.ndarray:
    """Paired t-tests' p-values at each look of ``n`` paths of per-repeat differences with no
    effect (rows: paths, columns: looks)."""
    x = np.random.default_rng(seed).standard_normal((n, max(looks)))
    out = []
    for k in looks:
        mean, sd = x[:, :k].mean(axis=1), x[:, :k].std(axis=1, ddof=1)
        out.append(2 * stats.t.sf(np.abs(mean) / (sd / np.sqrt(k)), k - 1))
    return np.column_stack(out)


def test_a_sequential_p_value_keeps_its_level_whatever_look_the_study_stops_at():
    """Under the null, P(p* ≤ α) ≤ α with a look at every round (the study may stop at any):
    the union bound over the looks' shares. The naive rule — the smallest p of any look — is
    what the spending prevents: it makes a false claim far more often than α."""
    schedule = Schedule(3, 3, 30)
    looks = schedule.looks()
    p = _null_paths(20_000, looks, seed=56)
    star = np.array([sequential_p(dict(zip(looks, row, strict=True)), schedule)[0]
                     for row in p])
    for alpha in (0.05, 0.01):
        assert (star <= alpha).mean() <= alpha  # 20,000 paths: a standard error ≤ 0.0016
    assert (p.min(axis=1) <= 0.05).mean() > 0.15  # optional stopping without spending
    # the decisive look is the one of the smallest p_k / s_k
    value, look = sequential_p({3: 0.001, 6: 0.0015, 9: 0.5}, schedule)
    assert (value, look) == (pytest.approx(0.01), 3)
    assert sequential_p({}, schedule) == (np.inf, None)


def test_a_study_of_nulls_stopped_at_every_look_keeps_the_false_claim_rate():
    """Pages where nothing acts (every claim a tie), stopped per block by the study's rule,
    every block looked at up to 10 times: the share of pages with any false claim (for a page
    of nulls, the FDR) stays within 5 %; effects of 5 SD stop at the second look (at the first,
    3 repeats' t-test has 2 degrees of freedom and a tenth of the level: p ≈ 0.013 at 5 SD,
    not enough), never running on to the last."""
    null = sequential_calibration.sequential_claims(["tie"] * 10, schedule=Schedule(3, 3, 30),
                                                    pages=300, seed=1)
    assert null["pages with a false claim"] <= 0.05
    assert null["FDR"] == null["pages with a false claim"]  # every claim a null
    strong = sequential_calibration.sequential_claims(
        ["very strong"] * 5, schedule=Schedule(3, 3, 30), pages=50, seed=2)
    assert strong["mean repeats per block"] == 6 and strong["power very strong"] == 1.0


def test_a_claim_out_of_reach_stops_waiting_a_close_one_keeps_its_block_open():
    schedule = Schedule(4, 4, 12)
    rounds = Rounds(1, {f"d|{c}": Block(4, [4]) for c in ("done", "open", "far", "max")})
    rounds.blocks["d|max"] = Block(12, [4, 8, 12])
    rounds.blocks["d|kept"] = Block(4, [4], stopped=DECIDED)
    bound = 0.002  # the bound an open claim faces on its tier

    def claim(kind, block, holds, effect, p=0.2):
        return {"kind": kind, "blocks": [f"d|{block}"], "holds": holds, "effect": effect,
                "room": np.nan, "unit": "repeats", "p_look": p, "p_bound": bound,
                "p_value": 1e-4 if holds else p}

    verdicts = pd.DataFrame([
        claim("leader", "done", True, 3.0), claim("classifiers", "done", False, 2.0),
        claim("leader", "open", False, 2.0), claim("leader", "far", False, 0.05),
        claim("leader", "max", False, 2.0), claim("leader", "kept", False, 2.0),
        # a claim over datasets is made once at the stop: it keeps no block open
        {**claim("classifiers over datasets", "far", False, np.nan, 0.3),
         "blocks": ["d|far", "d|done"], "unit": "datasets"}])
    status = block_status(verdicts, rounds, schedule, "leaders")
    got = dict(zip(status["classifier"], status["status"], strict=True))
    assert got == {"done": DECIDED, "open": "open", "far": FUTILE, "max": AT_MAX,
                   "kept": DECIDED}
    # deciding every claim: the open comparison keeps "done" open
    every = block_status(verdicts, rounds, schedule, "all")
    assert every.set_index("classifier").loc["done", "status"] == "open"
    assert every.set_index("classifier").loc["done", "open_claims"] == 1
    # the level left after a look: the bound the claim faces times the 2/3 the later looks
    # have left; the repeats for 80 % power there, from the claim's standardised effect
    assert level_left(bound, schedule, 4) == pytest.approx(bound * 2 / 3, rel=1e-12)
    assert level_left(bound, schedule, 12) == 0  # nothing left after the last look
    assert needed_at(2.0, np.nan, bound * 2 / 3) <= 12 < needed_at(0.05, np.nan, bound * 2 / 3)
    # a claim without a power calculation: projected from its p-value (√n growth), at the
    # level it can still reach
    assert projected_repeats(0.05, 10) == pytest.approx(10 * (2.8016 / 1.95996) ** 2,
                                                        rel=1e-3)
    z = stats.norm.isf(0.001 / 2) + stats.norm.ppf(0.8)
    assert projected_repeats(0.05, 10, 0.001) == pytest.approx(10 * (z / 1.95996) ** 2,
                                                               rel=1e-3)
    assert projected_repeats(1.0, 10) == np.inf
    verdicts.loc[2, ["effect", "p_look"]] = [np.nan, 0.9]
    far = block_status(verdicts, rounds, schedule, "leaders")
    assert far.set_index("classifier").loc["open", "status"] == FUTILE


def test_the_state_reads_back_and_a_damaged_one_says_how_to_recover(tmp_path):
    rounds = Rounds(2, {"vehicle|xgb": Block(8, [4, 8]), "vehicle|lr-sgd": Block(4, [4],
                                                                                 DECIDED)})
    assert Rounds.from_json(rounds.to_json()) == rounds
    assert read_rounds(tmp_path) is None
    (tmp_path / "sequential").mkdir()
    (tmp_path / "sequential" / "rounds.json").write_text('{"round": 2}')
    with pytest.raises(ValueError, match="not a sequential study's state.*delete it to start "
                                         "again"):
        read_rounds(tmp_path)


def test_a_last_look_before_the_first_round_is_refused():
    import yaml

    from modelvar.planning.config_check import ConfigProblems, check_config

    config = yaml.safe_load((CONFIGS / "sequential.yaml").read_text())
    config["sequential"]["max_repeats"] = 3
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    with pytest.raises(ConfigProblems, match=r"sequential.max_repeats: 3 is below the first "
                                             r"round's repeats \(split.repeats: 4\)"):
        check_config(config, schema)


# ------------------------------------------------------------------ the page's own code
def _judged(schedule, rounds, tables, decide="all"):
    from modelvar.findings.study import Sequential, judge_sequential

    return judge_sequential(tables["summary"], tables["agreement"], tables["runs"],
                            tables["roles"], Sequential(schedule, rounds, decide),
                            weak_below=0.5)


def test_one_look_is_the_fixed_study_and_later_looks_pay_for_the_earlier_ones():
    """A sequential study with a single look judges as the fixed study; with looks at 4 and 8
    each of a claim's hypotheses' p is min_k p_k / s_k of the fixed study's p-values on the
    first n_k repeats (recomputed here look by look), the claim's the smallest of them."""
    from modelvar.findings.study import judge_study

    tables, _ = calibration.simulate_page(calibration.SCENARIOS["planted"], repeats=8,
                                          rng=np.random.default_rng(5))
    blocks = tables["roles"]

    def fixed(n):
        part = {k: t[t["repeat"] < n] for k, t in tables.items() if k != "roles"}
        return judge_study(part["summary"], part["agreement"], part["runs"], tables["roles"],
                           weak_below=0.5).tables["verdicts"].set_index("key")

    one = _judged(Schedule(8, 8, 8), Rounds.first(Schedule(8, 8, 8), blocks), tables)
    at8 = fixed(8)
    got = one.tables["verdicts"].set_index("key")
    assert got["p_value"].to_numpy() == pytest.approx(at8.loc[got.index, "p_value"], abs=0)
    assert got["holds"].tolist() == at8.loc[got.index, "holds"].tolist()

    schedule = Schedule(4, 4, 8)
    rounds = Rounds(2, {name: Block(8, [4, 8]) for name in Rounds.first(schedule,
                                                                         blocks).blocks})
    two = _judged(schedule, rounds, tables).tables["verdicts"].set_index("key")
    at4 = fixed(4)
    for key, row in two.iterrows():
        looks = {8: at8.loc[key, "p_values"]}
        if key in at4.index:
            looks[4] = at4.loc[key, "p_values"]
        stars = []
        first = []
        for j, h in enumerate(row["hypotheses"]):
            ps = {n: p[j] / 0.5 for n, p in looks.items() if np.isfinite(p[j])}
            stars.append(min(1.0, *ps.values()) if ps else np.nan)
            # a hypothesis that holds is decided at the first look that passes its bound
            if h in row["held"]:
                first.append(min(n for n in ps if ps[n] <= row["p_bounds"][j]))
        assert row["p_values"] == pytest.approx(stars, rel=1e-12, nan_ok=True)
        assert row["p_value"] == pytest.approx(np.nanmin(stars), rel=1e-12)
        if row["holds"]:
            assert row["look"] == min(first)
    assert (two["holds"] & (two["look"] == 4)).any()  # the planted effects show at 4 repeats
    assert (two["p_value"] >= np.minimum(two["p_look"], 1) - 1e-15).all()


def test_comparisons_over_datasets_are_made_once_at_the_stop():
    """From 6 datasets the page compares the classifiers over datasets: that claim is made on
    each block's repeats at its stop (not per look) and keeps no block open."""
    tables, _ = calibration.simulate_page(calibration.SCENARIOS["planted"], repeats=6,
                                          datasets=6, rng=np.random.default_rng(6))
    schedule = Schedule(3, 3, 9)
    rounds = Rounds(2, {name: Block(6, [3, 6]) for name in Rounds.first(schedule, tables[
        "roles"]).blocks})
    judged = _judged(schedule, rounds, tables)
    verdicts = judged.tables["verdicts"]
    over = verdicts[verdicts["kind"] == "classifiers over datasets"]
    assert len(over) and (over["p_value"] == over["p_look"]).all()
    study = judged.tables["study_comparison"]
    claims = study[study["source"] != "control"]
    assert claims["verdict"].isin(["supported", "contradicted", "inconclusive"]).all()
    assert (study.loc[study["source"] == "control", "verdict"] == "not tested").all()


# ------------------------------------------------------------------ the workflow
def _run_sh(*args, cwd, **kw):
    env = dict(os.environ, MODELVAR_VENV=str(Path(sys.executable).parents[1]))
    return subprocess.Popen(["bash", str(REPO / "scripts" / "run.sh"), *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def _fit_jobs(folder: Path) -> dict[str, float]:
    """The finished fit jobs (classifier/…+N.rR → their manifest's modification time)."""
    root = folder / "results" / ".modelvar" / "manifests" / "fit" / "vehicle"
    return {str(p.relative_to(root)): p.stat().st_mtime for p in root.rglob("*.json")}


def _repeat(job: str) -> tuple[str, int]:
    clf, name = job.split("/")
    return clf, int(re.search(r"\.r(\d+)\.json$", name).group(1))


@pytest.mark.workflow
def test_a_sequential_study_runs_in_rounds_and_resumes_after_a_kill(tmp_path):
    """tests/configs/sequential.yaml through scripts/run.sh: round 1 fits 4 repeats of each
    block; lr-sgd's clear leader is decided at the first look and its block gets no more
    repeats; only xgb's open block gets repeats 4–7 (fit jobs counted); the run killed in
    round 2 resumes without refitting round 1; the run summary and the Findings page say per
    dataset × classifier the repeats used and why it stopped."""
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
    assert sorted(_repeat(j) for j in round1 if _repeat(j)[1] < 4) == sorted(
        (c, r) for c in ("lr-sgd", "xgb") for r in range(4))
    rounds = read_rounds(tmp_path / "results")
    assert rounds.blocks["vehicle|lr-sgd"].repeats == 4
    assert rounds.blocks["vehicle|lr-sgd"].stopped is not None
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
    new = {_repeat(j) for j in planned} | {_repeat(j) for j in _fit_jobs(tmp_path)
                                           if _repeat(j)[1] >= 4}
    assert new == {("xgb", r) for r in range(4, 8)}
    assert all(_repeat(j)[1] >= 4 for j in planned)

    resumed = _run_sh("--configfile", "seq.yaml", "--cores", "2", cwd=tmp_path)
    out = resumed.communicate(timeout=600)[0]
    assert resumed.returncode == 0, out
    after = _fit_jobs(tmp_path)
    assert {j: after[j] for j in round1} == round1  # round 1's fits are not redone
    final = read_rounds(tmp_path / "results")
    assert all(b.stopped for b in final.blocks.values())
    assert final.blocks["vehicle|lr-sgd"].looks == [4]
    assert {_repeat(j) for j in after if j.startswith("lr-sgd")} == {("lr-sgd", r)
                                                                     for r in range(4)}
    xgb = final.blocks["vehicle|xgb"]
    assert {_repeat(j)[1] for j in after if j.startswith("xgb")} == set(range(xgb.repeats))
    summary = [line for line in out.splitlines() if line.strip().startswith("sequential:")]
    assert any(f"vehicle, lr-sgd: 4 repeats (looks at 4); stopped, "
               f"{final.blocks['vehicle|lr-sgd'].stopped}: " in line for line in summary), out
    assert any(f"vehicle, xgb: {xgb.repeats} repeats" in line for line in summary), out
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
