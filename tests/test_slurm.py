"""The workflow on a real one-machine SLURM cluster, through profiles/slurm (issues 8, 12).

Needs the cluster that ``tests/slurm/setup.sh`` starts (``bash .ci/run`` does, as root on Debian);
skipped with the reason elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import CENTROID_SOURCE, CONFIGS, REPO, job_counts

pytestmark = [pytest.mark.workflow, pytest.mark.slurm]


def _cluster_up() -> str | None:
    if shutil.which("sinfo") is None:
        return "no SLURM client tools (run tests/slurm/setup.sh as root)"
    proc = subprocess.run(["sinfo", "-h", "-o", "%T %G"], capture_output=True, text=True)
    if proc.returncode != 0 or not any(s in proc.stdout for s in ("idle", "mixed", "alloc")):
        return f"no SLURM node is up: {proc.stdout.strip()} {proc.stderr.strip()}"
    if "gpu" not in proc.stdout:
        return "the SLURM node declares no (fake) GPU"
    return None


REASON = _cluster_up()
skip_without_slurm = pytest.mark.skipif(REASON is not None, reason=str(REASON))


def run_slurm(workdir: Path, config: Path, *args: str) -> subprocess.CompletedProcess:
    """The workflow through the SLURM profile, hard-killed if it hangs (timeout -k)."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    cmd = ["timeout", "-k", "10", "600", sys.executable, "-m", "snakemake",
           "-s", str(REPO / "Snakefile"), "--directory", str(workdir),
           "--workflow-profile", str(REPO / "profiles" / "slurm"), "--configfile", str(config),
           "--jobs", "4", "--latency-wait", "10",
           "--slurm-init-seconds-before-status-checks", "2", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=700)


def _variant(tmp_path: Path, name: str, mutate) -> Path:
    data = yaml.safe_load((CONFIGS / "slurm.yaml").read_text())
    mutate(data)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


@skip_without_slurm
def test_slurm_run_gpu_job_failure_and_resume(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    t0 = time.perf_counter()
    # the fit jobs of both CPU classifiers ask for one limit (the config's `fit` memory, above
    # the plan's): they may go as an array
    proc = run_slurm(work, CONFIGS / "slurm.yaml", "--slurm-efficiency-report",
                     "--slurm-array-jobs", "fit")
    first_seconds = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    # issue 69: the fit jobs went as a job array (SLURM's <job>_<task> ids), the load said so,
    # and the efficiency report (sacct, with the test cluster's slurmdbd) lies where the
    # profile puts it, a row per job step with its rule and its memory against the ask
    out = proc.stdout + proc.stderr
    assert "modelvar: SLURM: fit: 2 jobs as job arrays, 1 sbatch call(s)" in out, out[-3000:]
    assert re.search(r"Submitted array job with Snakemake IDs \d+,\d+ and SLURM job ID", out), \
        out[-3000:]
    reports = list((work / ".snakemake" / "slurm-efficiency").glob("efficiency_report_*.csv"))
    if shutil.which("sacctmgr"):  # accounting: the set-up's default (WITH_DBD=1)
        assert len(reports) == 1, out[-3000:]
        report = pd.read_csv(reports[0])
        assert report["RuleName"].str.contains("rule_fit").any(), report.to_string()
        assert {"Memory Usage (%)", "CPU Efficiency (%)"} <= set(report.columns)
    results = work / "results"
    figures = results / "vehicle" / "figures"
    assert (figures / "gross_accuracy_grid.png").stat().st_size > 10_000
    summary = pd.read_parquet(results / "aggregated" / "summary")
    assert set(summary["classifier"]) == {"lr-sgd", "svm-sgd", "mlp"}
    # the GPU-tagged MLP job got the (fake) GPU from SLURM; the CPU job did not
    mlp_log = (results / "logs/fit_mlp/vehicle/mlp/dnone_cnone_hnone.r0-1.log").read_text()
    lr_log = (results / "logs/fit/vehicle/lr-sgd/dnone_cnone_hnone.r0-1.log").read_text()
    assert "CUDA_VISIBLE_DEVICES=0" in mlp_log and "SLURM_JOB_ID=" in mlp_log
    assert "CUDA_VISIBLE_DEVICES=unset" in lr_log
    assert "runs done 6/6" in mlp_log  # a batch of 2 repeats of 3 runs per job

    preds = sorted((results / "predictions").glob("*/*/*.parquet"))
    before = {p: p.stat().st_mtime_ns for p in preds}
    assert len(before) == 3  # one fit job per classifier: its batch of both repeats

    # a job that fails on the cluster: a predictions file its job wrote damaged (as a disk
    # that flipped bits under the write), and the metrics jobs forced. A bad configuration is
    # refused before any job is submitted, and a file changed after its job (its size, or its
    # change time: issue 66) makes a resume redo that job, so neither can make a job fail: the
    # manifest records the damaged file as its job's
    damaged = (results / "predictions/dataset=vehicle/classifier=lr-sgd"
               / "dnone_cnone_hnone.r0-1.parquet")
    content = damaged.read_bytes()
    manifest_path = results / ".modelvar/manifests/fit/vehicle/lr-sgd/dnone_cnone_hnone.r0-1.json"
    manifest = json.loads(manifest_path.read_text())
    record = next(r for r in manifest["files"] if r["path"].startswith("pred"))
    damaged.write_bytes(content[:-4] + b"\0\0\0\0")  # the footer's magic number
    os.utime(damaged, ns=(record["mtime_ns"], record["mtime_ns"]))
    stat = damaged.stat()
    record.update(sha256=hashlib.sha256(damaged.read_bytes()).hexdigest(),
                  ctime_ns=stat.st_ctime_ns)
    times = manifest_path.stat()
    manifest_path.write_text(json.dumps(manifest))
    os.utime(manifest_path, ns=(times.st_atime_ns, times.st_mtime_ns))
    proc = run_slurm(work, CONFIGS / "slurm.yaml", "--forcerun", "pairwise_metrics")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-5000:]
    log = "logs/pairwise_metrics/vehicle/lr-sgd/dnone_cnone_hnone.r0-1.log"
    assert "Error in rule pairwise_metrics" in out and log in out
    job_log = (results / log).read_text()
    assert str(damaged.relative_to(work)) in job_log and "truncated or corrupt" in job_log
    assert "--force" in job_log  # the command that regenerates it

    # the fix, with a new classifier added: the damaged table's job, what depends on it and the
    # new classifier's jobs run; the MLP's finished fits are not redone
    fixed = _variant(tmp_path, "fixed.yaml", lambda c: c["classifiers"].append("xgb"))
    proc = run_slurm(work, fixed, "--force", str(damaged.relative_to(work)), "all")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    counts = job_counts(proc.stdout + proc.stderr)
    assert counts.get("fit") == 2 and "fit_mlp" not in counts  # lr-sgd's (damaged), xgb's
    mlp_preds = [p for p in preds if "classifier=mlp" in str(p)]
    assert {p: p.stat().st_mtime_ns for p in mlp_preds} == {p: before[p] for p in mlp_preds}
    summary = pd.read_parquet(results / "aggregated" / "summary")
    assert set(summary["classifier"]) == {"lr-sgd", "svm-sgd", "mlp", "xgb"}
    print(f"SLURM test: first run {first_seconds:.1f} s")


SLEEPY = CENTROID_SOURCE + """

import os
import time
from pathlib import Path


class Sleepy(Centroid):
    '''Its first fit in a folder sleeps SLEEPY_SECONDS: a job that needs more time than its
    limit (the scheduler's kill leaves the marker, so the retry runs at its own pace).'''

    def fit(self, X, y):
        marker = Path("slept")
        if not marker.exists():
            marker.write_text("yes")
            time.sleep(float(os.environ.get("SLEEPY_SECONDS", "0")))
        return super().fit(X, y)
"""


@skip_without_slurm
def test_a_fit_job_killed_for_time_comes_back_with_twice_the_limit(tmp_path):
    """Issue 50: a fit job's limit (1 minute: jobs.runtime_margin_minutes 0) far below its need
    (~100 s): SLURM kills it with TIMEOUT (its time-limit check runs every 30 s), the profile's
    retry asks for 2 minutes and completes, the run summary names it, and its predictions are
    those of a run without the kill."""
    def sleepy(c):
        c["classifiers"] = [{"name": "sleepy", "estimator": "sleepy.py:Sleepy",
                             "seconds_per_fit": 0.01}]
        c["split"] = {"test_fraction": 0.25, "repeats": 2, "runs": 2}
        c["jobs"] = {"runtime_margin_minutes": 0}
        c["resources"]["fit"] = {"threads": 1, "mem_mb": 1000, "runtime": 1}

    config = _variant(tmp_path, "sleepy.yaml", sleepy)
    work, baseline = tmp_path / "work", tmp_path / "baseline"
    for folder in (work, baseline):
        folder.mkdir()
        (folder / "sleepy.py").write_text(SLEEPY)
    table = "results/predictions/dataset=vehicle/classifier=sleepy/dnone_cnone_hnone.r0-1.parquet"
    os.environ["SLEEPY_SECONDS"] = "100"
    try:
        proc = run_slurm(work, config, table)
    finally:
        del os.environ["SLEEPY_SECONDS"]
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "SLURM status is: 'TIMEOUT'" in out, out[-4000:]
    assert "Trying to restart job" in out
    assert "needed more than one attempt" in out and "fit vehicle, sleepy" in out
    # the retry asked SLURM for twice the first attempt's limit
    limits = re.findall(r"rule fit:\n(?:\s+.*\n)*?\s+resources: .*runtime=(\d+)", out)
    assert list(dict.fromkeys(limits)) == ["1", "2"], limits  # (each block is printed twice)
    log = (work / "results/logs/fit/vehicle/sleepy/dnone_cnone_hnone.r0-1.log").read_text()
    assert "runs done" in log
    local = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
         str(baseline), "--configfile", str(config), "--cores", "1", table],
        capture_output=True, text=True, timeout=600)
    assert local.returncode == 0, local.stderr[-3000:]
    pd.testing.assert_frame_equal(pd.read_parquet(work / table),
                                  pd.read_parquet(baseline / table))
