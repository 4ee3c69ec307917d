"""SLURM job arrays as the plan's runs would use them (issue 69): the load says in how many sbatch
calls an arrayed rule's jobs go (a dry run too), and refuses to array a rule whose jobs ask for
different limits, which the executor would submit with the first job's (issue 67's review)."""

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


def test_the_slurm_profile_arrays_no_rule():
    """The executor gives every task of an array its first job's limits, and the plan sizes each
    fit and metrics job: the profile submits every job on its own."""
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "profile.yaml").read_text())
    assert "slurm-array-jobs" not in profile
    # read as the workflow's load reads it: in a process of its own (a test worker's earlier
    # tests once left Snakemake's parser unable to read the profile in one CI run)
    code = ("import json, sys; from modelvar.running.workflow_config import _parsed, "
            "slurm_arrays; argv = sys.argv[1:]; _parsed(argv); "
            "print(json.dumps(slurm_arrays(argv)))")
    found = {}
    for name, extra in (("slurm", []), ("local", []),
                        ("slurm", ["--slurm-array-jobs", "pairwise_metrics"])):
        proc = subprocess.run([sys.executable, "-c", code, "--workflow-profile",
                               str(REPO / "profiles" / name), *extra], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        found[name, *extra] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found == {("slurm",): [None, None], ("local",): None,
                     ("slurm", "--slurm-array-jobs", "pairwise_metrics"):
                         ["pairwise_metrics", None]}


def test_an_arrayed_rule_whose_jobs_ask_for_different_limits_is_refused():
    """The plan's fit jobs of two datasets ask for different limits: arraying their rule is a
    problem naming the range and the fix; a rule of one limit is not, nor a rule not arrayed."""
    from tests.test_plan import study

    from conftest import completed
    from modelvar.planning.plan import plan_study
    from modelvar.running.slurm_arrays import planned_limits, uneven_problems

    config = completed(study(classifiers=["lr-sgd"], jobs={"data_probe_seconds": 0}))
    limits = planned_limits(config, plan_study(config, {}))
    assert len(limits["fit"]) > 1 and len(limits["pairwise_metrics"]) > 1
    problems = uneven_problems("fit, design", limits)
    assert len(problems) == 1
    assert re.fullmatch(r"--slurm-array-jobs names fit, whose jobs ask for different limits "
                        r"\(runtime [\d,]+ to [\d,]+ min, mem_mb [\d,]+ to [\d,]+\): the SLURM "
                        r"executor gives every task of an array its first job's limits, .* leave "
                        r"fit out of --slurm-array-jobs .*", problems[0])
    assert uneven_problems("design", limits) == [] and uneven_problems(None, limits) == []
    assert len(uneven_problems("all", limits)) == 2  # fit and pairwise_metrics
    # the config's resources raise every metrics job to one limit: arrays are fine
    raised = completed(study(classifiers=["lr-sgd"], jobs={"data_probe_seconds": 0},
                             resources={"pairwise": {"runtime": 10_000, "mem_mb": 900_000}}))
    assert uneven_problems("pairwise_metrics",
                           planned_limits(raised, plan_study(raised, {}))) == []
    # fit jobs whose limits follow a probe job (OpenML, probes on): each its own
    probed = completed(study(classifiers=["lr-sgd"],
                             resources={"fit": {"runtime": 10_000, "mem_mb": 900_000}}))
    found = uneven_problems("fit", planned_limits(probed, plan_study(probed, {})))
    assert len(found) == 1 and "set by probe jobs" in found[0]


@pytest.mark.workflow
def test_a_dry_run_of_the_full_study_refuses_arrays_of_unevenly_sized_jobs(tmp_path):
    config = yaml.safe_load((REPO / "config" / "full-study.yaml").read_text())
    config["results_dir"] = str(tmp_path / "results")
    path = tmp_path / "full.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = snakemake(tmp_path, path, "-n", "--workflow-profile", str(REPO / "profiles" / "slurm"),
                     "--configfile", str(path), str(REPO / "config/openml/seed-study.yaml"),
                     "--slurm-array-jobs", "fit_mlp", check=False, timeout=900)
    assert proc.returncode != 0
    assert "modelvar: --slurm-array-jobs names fit_mlp, whose jobs ask for different limits" \
        in proc.stderr, proc.stderr[-3000:]
    # the profile alone: no arrays, the dry run lists the jobs
    proc = snakemake(tmp_path, path, "-n", "--workflow-profile", str(REPO / "profiles" / "slurm"),
                     "--configfile", str(path), str(REPO / "config/openml/seed-study.yaml"),
                     timeout=900)
    assert "jobs as job arrays" not in proc.stderr and "probe_data" in proc.stdout
