"""SLURM job arrays as the plan's runs will use them (issue 69): the profile sends the fit and
metrics jobs as arrays, and the load says in how many sbatch calls (a dry run too)."""

import json
import re
import subprocess
import sys

import pytest
import yaml

from conftest import REPO, snakemake
from modelvar.running.slurm_arrays import array_lines, arrayed_rules


def test_the_lines_count_the_sbatch_calls_of_each_arrayed_rule():
    jobs = {"prepare_dataset": 3, "fit": 2_500, "fit_mlp": 1, "pairwise_metrics": 1_000,
            "findings": 1, "all": 1}
    lines = array_lines("fit; fit_mlp, pairwise_metrics", 1000, jobs)
    assert lines == [
        "SLURM: fit: 2,500 jobs as job arrays, 3 sbatch call(s) of at most 1,000 tasks "
        "(--slurm-array-limit)",
        "SLURM: fit_mlp: 1 job, submitted on its own (an array needs two)",
        "SLURM: pairwise_metrics: 1,000 jobs as job arrays, 1 sbatch call(s) of at most 1,000 "
        "tasks (--slurm-array-limit)"]
    assert len(array_lines("all", 400, jobs)) == 5  # every rule with jobs but `all`
    assert array_lines(None, None, jobs) == [] and arrayed_rules(" ") == set()


def test_the_slurm_profile_arrays_the_fit_and_metrics_rules_only():
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "profile.yaml").read_text())
    assert arrayed_rules(profile["slurm-array-jobs"]) == {
        "fit", "fit_mlp", "pairwise_metrics", "grouped_metrics"}
    # read as the workflow's load reads it: in a process of its own (a test worker's earlier
    # tests once left Snakemake's parser unable to read the profile in one CI run)
    code = ("import json, sys; from modelvar.running.workflow_config import _parsed, "
            "slurm_arrays; argv = sys.argv[1:]; _parsed(argv); "
            "print(json.dumps(slurm_arrays(argv)))")
    found = {}
    for name in ("slurm", "local"):
        proc = subprocess.run([sys.executable, "-c", code, "--workflow-profile",
                               str(REPO / "profiles" / name)], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        found[name] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found == {"slurm": [profile["slurm-array-jobs"], None], "local": None}


@pytest.mark.workflow
def test_a_dry_run_of_the_full_study_on_the_slurm_profile_lists_its_array_submissions(tmp_path):
    config = yaml.safe_load((REPO / "config" / "full-study.yaml").read_text())
    config["results_dir"] = str(tmp_path / "results")
    path = tmp_path / "full.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = snakemake(tmp_path, path, "-n", "--workflow-profile", str(REPO / "profiles" / "slurm"),
                     "--configfile", str(path), str(REPO / "config/openml/seed-study.yaml"),
                     "--slurm-array-limit", "500", timeout=900)
    found = dict(re.findall(r"SLURM: (\w+): ([\d,]+) jobs as job arrays", proc.stderr))
    assert set(found) == {"fit", "fit_mlp", "pairwise_metrics", "grouped_metrics"}
    total = sum(int(n.replace(",", "")) for n in found.values())
    assert total > 2_000  # the bulk of the study's 3,263 jobs
    fit = int(found["fit"].replace(",", ""))
    assert f"SLURM: fit: {fit:,} jobs as job arrays, {-(-fit // 500)} sbatch call(s) of at " \
           "most 500 tasks" in proc.stderr
