"""Killed jobs come back with more (issue 50, item 2): every rule's runtime and mem_mb double on
each attempt, the SLURM profile retries, and the run summary names the jobs that needed
another attempt. The SLURM kill itself (TIMEOUT) is in tests/test_slurm.py."""

from __future__ import annotations

import re
import textwrap

import pandas as pd
import pytest
import yaml

from conftest import CENTROID_SOURCE, CONFIGS, REPO, snakemake
from modelvar.planning.plan import on_attempt, runtime_minutes
from modelvar.running.snakemake_log import restarted_jobs, restarts_line

ONCE = CENTROID_SOURCE + textwrap.dedent("""

    from pathlib import Path


    class FailsOnce(Centroid):
        '''Its first fit in a folder fails, as a job the scheduler killed.'''

        def fit(self, X, y):
            marker = Path("first-attempt-failed")
            if not marker.exists():
                marker.write_text("yes")
                raise RuntimeError("killed on its first attempt")
            return super().fit(X, y)
    """)


def test_resources_double_on_each_attempt_and_the_margin_is_the_configs():
    assert [on_attempt(90, a) for a in (1, 2, 3)] == [90, 180, 360]
    assert on_attempt(0.4, 2) == 1  # whole minutes or megabytes, rounded up
    with pytest.raises(ValueError, match="attempt counts from 1"):
        on_attempt(10, 0)
    assert runtime_minutes(60) == 2 * (60 + 1.5) // 60 + 1 + 10
    assert runtime_minutes(0.01, margin_minutes=0) == 1  # never below a minute
    profile = yaml.safe_load((REPO / "profiles/slurm/profile.yaml").read_text())
    assert profile["retries"] == 2


def test_the_log_parser_names_each_restarted_job_once_with_its_attempts():
    log = textwrap.dedent("""\
        [Thu Nov 26 18:00:00 2026]
        rule fit:
            input: results/datasets/vehicle.parquet
            jobid: 7
            reason: Missing output files
            wildcards: dataset=vehicle, classifier=lr-sgd, job=dnone_cnone_hnone
            resources: mem_mb=1000, runtime=11
        [Thu Nov 26 18:00:01 2026]
        localrule all:
            jobid: 0
        Error in rule fit:
            jobid: 7
        Trying to restart job 7.
        Trying to restart job 7.
        Trying to restart job 0.
        """).splitlines(keepends=True)
    jobs = restarted_jobs(log)
    assert [str(j) for j in jobs] == ["fit vehicle, lr-sgd, dnone_cnone_hnone (3 attempts)",
                                      "all (2 attempts)"]
    assert restarted_jobs(log[:9]) == []


def test_a_job_that_fails_once_is_retried_with_doubled_resources_and_named(tmp_path):
    (tmp_path / "fails_once.py").write_text(ONCE)
    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config["classifiers"] = [{"name": "once", "estimator": "fails_once.py:FailsOnce",
                              "seconds_per_fit": 0.01}]
    config["jobs"] = {"runtime_margin_minutes": 3}
    del config["grouped"]
    (tmp_path / "my.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(tmp_path, tmp_path / "my.yaml", "--cores", "1", "--retries", "1",
                     "--printshellcmds")
    out = proc.stdout + proc.stderr
    assert "Trying to restart job" in out
    note = re.search(r"note: 1 job\(s\) needed more than one attempt.*", out)
    assert note, out[-3000:]
    assert "fit vehicle, once, " in note.group(0) and "(2 attempts)" in note.group(0)
    assert "modelvar plan --calibrate" in note.group(0)
    # the retry asked for twice the first attempt's time limit and memory
    fit_blocks = re.findall(r"rule fit:\n(?:\s+.*\n)*?\s+resources: (.*)", out)
    limits = [dict(kv.split("=") for kv in block.split(", ") if "=" in kv) for block in fit_blocks]
    # one fit job (a batch of both repeats) failed and came back once, with twice the limits
    assert sorted(int(r["runtime"]) for r in limits) == [4, 8], fit_blocks
    first = next(r for r in limits if int(r["runtime"]) == 4)
    retry = next(r for r in limits if int(r["runtime"]) == 8)
    assert int(retry["mem_mb"]) == 2 * int(first["mem_mb"])
    # the retried job's results are those of a job that never failed
    again = tmp_path / "again"
    again.mkdir()
    (again / "fails_once.py").write_text(ONCE)
    (again / "first-attempt-failed").write_text("yes")
    (again / "my.yaml").write_text((tmp_path / "my.yaml").read_text())
    tables = sorted((tmp_path / "results/predictions").rglob("*.parquet"))
    assert tables
    targets = [str(t.relative_to(tmp_path)) for t in tables]
    snakemake(again, again / "my.yaml", "--cores", "1", *targets)
    for table, target in zip(tables, targets, strict=True):
        pd.testing.assert_frame_equal(pd.read_parquet(table), pd.read_parquet(again / target))
    assert restarts_line([tmp_path / "no-such.log"]) is None
