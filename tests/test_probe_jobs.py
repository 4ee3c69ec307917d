"""Probe jobs (issue 67, item 3): where a dataset arrives in a job (OpenML), a probe job after its
prepare job measures a classifier on its own rows, and that measurement sets the fit jobs' time
and memory limits."""

import json
import math
import re

import pytest
import yaml
from tests.test_openml_source import serving
from tests.test_plan import study

from conftest import REPO, completed, job_counts, snakemake
from modelvar.planning.plan import LIMIT_FACTOR, FitJob, job_resources, plan_study
from modelvar.planning.probe_jobs import (
    PEAK_HEADROOM,
    ProbeResult,
    ProbeResultError,
    probe_job,
    probed_job,
)


def result(**over):
    values = dict(dataset="d", classifier="lr-sgd", factor=0.25, spread=1.2, rows=512, fits=4,
                  cpu=0.3, peak_mb=300.0, n_rows=898, d=112, n_classes=5)
    return ProbeResult(**{**values, **over})


def test_a_probe_sets_a_fit_jobs_estimate_bound_and_memory():
    job = FitJob("g.r0", ("c",), (0,), (0, 10), 120.0, 400, "g.r0", limit_factor=3.5)
    fast = probed_job(job, result(factor=0.25, spread=1.2, peak_mb=300.0))
    # the estimate scaled, the bound the probe's (2, its spread being smaller), the memory at
    # least 1.5 x the probe process's peak
    assert (fast.seconds, fast.limit_factor, fast.mem_mb) == (30.0, LIMIT_FACTOR, 450)
    slow = probed_job(job, result(factor=3.0, spread=2.6, peak_mb=100.0))
    assert (slow.seconds, slow.limit_factor, slow.mem_mb) == (360.0, 2.6, 400)
    assert slow.cells == job.cells and slow.repeats == job.repeats and slow.id == job.id


@pytest.mark.parametrize("text, problem", [
    ("{", "not a probe job's result"),
    ('{"factor": 1}', "not a probe job's result"),
    (result(factor=-1.0).to_json(), "not a probe's measurement"),
    (result(spread=0.5).to_json(), "not a probe's measurement"),
])
def test_a_damaged_probe_result_is_named_with_its_fix(tmp_path, text, problem):
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(ProbeResultError, match=f"{path}.*{problem}.*probes again"):
        ProbeResult.read(path)
    assert ProbeResult.read(_written(tmp_path, result())) == result()


def _written(tmp_path, found):
    path = tmp_path / "ok.json"
    path.write_text(found.to_json())
    return path


def test_the_plan_gives_a_probe_job_to_each_downloaded_dataset_and_cpu_classifier():
    plan = plan_study(completed(study()), {})
    # small, big and cats are OpenML datasets (priced from their profiles); the MLP runs on a
    # GPU (no probe fits price it)
    assert sorted(plan.probe_jobs) == sorted((ds, clf) for ds in ("small", "big", "cats")
                                             for clf in ("lr-sgd", "xgb"))
    config = completed(study())
    assert plan.probe_share == config["jobs"]["data_probe_seconds"]  # each job the budget
    limits = probe_job(plan, "big", "xgb")
    assert limits.mem_mb == max(j.mem_mb for j in plan.datasets["big"].classifiers["xgb"].fit_jobs)
    with pytest.raises(KeyError, match="no probe job of mlp on big"):
        probe_job(plan, "big", "mlp")
    off = plan_study(completed(study(jobs={"data_probe_seconds": 0})), {})
    assert off.probe_jobs == []


# ------------------------------------------------------------------------ through the workflow
ANNEAL_PROFILE = {"rows": 898, "numeric": 6, "categorical": 32, "classes": 5}
#: the cost model's lr-sgd made this many times too slow: the plan from the profile alone is
#: that far off, as the shape alone was for noisy real data (issue 67)
SLOWER = 20.0


@pytest.fixture
def stand_in():
    with serving() as server:
        yield server


def _fit_resources(stdout: str) -> dict[str, tuple[int, int]]:
    """job → (runtime, mem_mb) of every fit job a dry run lists."""
    out = {}
    for block in re.split(r"\n(?=\[|rule )", stdout):
        if not block.startswith("rule fit:"):
            continue
        job = re.search(r"job=(\S+)", block).group(1)
        found = re.search(r"resources: .*runtime=(\d+), mem_mb=(\d+)", block)
        out[job] = (int(found.group(1)), int(found.group(2)))
    return out


@pytest.mark.workflow
def test_a_downloaded_datasets_fit_jobs_get_their_limits_from_its_probe_job(tmp_path, stand_in,
                                                                           monkeypatch):
    """An OpenML dataset (served by a loopback stand-in) with a cost model 20x too slow for
    lr-sgd: before its probe job the fit job's limits are the plan's (the profile and the cost
    model, bounded by the classifier's worst miss); after it, the probe's measurement (its
    factor near 1/20, its spread, its peak memory) sets them, as the formula says, and only the
    probe job and what follows the dataset's download run for it."""
    model = json.loads((REPO / "src/modelvar/planning/cost_model.json").read_text())
    for regime in model["classifiers"]["lr-sgd"]:
        regime["intercept"] += math.log(SLOWER)
    model["source"] = "a test's cost model, lr-sgd 20x too slow"
    (tmp_path / "slow-model.json").write_text(json.dumps(model))
    config = tmp_path / "study.yaml"
    config.write_text(yaml.safe_dump({
        "root_seed": 5, "results_dir": "results",
        "datasets": {"anneal": {"source": "openml", "data_id": 2, "version": 1, "retries": 1,
                                "profile": ANNEAL_PROFILE}},
        "openml": {"server": stand_in.api, "cache_dir": str(tmp_path / "openml-cache")},
        "classifiers": ["lr-sgd"], "split": {"test_fraction": 0.25, "repeats": 1, "runs": 100},
        "perturbation": {"downsample": [1.0], "model_seed": ["per-run"]},
        "simulation": {"enabled": False},
        "jobs": {"cost_model": str(tmp_path / "slow-model.json"), "data_probe_seconds": 3,
                 "runtime_margin_minutes": 0}}))
    before = snakemake(tmp_path, config, "-n", "--cores", "1")
    assert job_counts(before.stdout)["probe_data"] == 1
    assert "results/probes/anneal/lr-sgd.json" in before.stdout
    planned = _fit_resources(before.stdout)
    assert planned and stand_in.requests == []  # a dry run downloads nothing

    snakemake(tmp_path, config, "--cores", "2", "results/probes/anneal/lr-sgd.json")
    probe = ProbeResult.read(tmp_path / "results/probes/anneal/lr-sgd.json")
    assert probe.n_rows == 898 and probe.n_classes == 5 and probe.peak_mb > 50
    assert 0.3 / SLOWER < probe.factor < 3 / SLOWER, probe  # the data, not the slow model

    after = snakemake(tmp_path, config, "-n", "--cores", "1")
    assert "probe_data" not in job_counts(after.stdout)
    probed = _fit_resources(after.stdout)
    assert probed.keys() == planned.keys()
    from modelvar.running.workflow_config import plan_of_command_line

    monkeypatch.chdir(tmp_path)  # the config's results folder (its recorded batches)
    plan, checked = plan_of_command_line(["--configfile", str(config)], probe_data=False)
    for job_id, (runtime, mem_mb) in probed.items():
        job = plan.fit_job("anneal", "lr-sgd", job_id)
        want = job_resources(checked, "fit", 1, probed_job(job, probe))
        assert (runtime, mem_mb) == (want["runtime"], want["mem_mb"])
        assert planned[job_id] == (job_resources(checked, "fit", 1, job)["runtime"],
                                   job_resources(checked, "fit", 1, job)["mem_mb"])
        assert runtime < planned[job_id][0]  # the plan was 20x too slow
        assert mem_mb >= math.ceil(PEAK_HEADROOM * probe.peak_mb)
