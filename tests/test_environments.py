"""Per-rule software environments and the light library install (issue 16)."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import CONFIGS, REPO, snakemake

pytestmark = pytest.mark.workflow


def test_envs_are_generated_from_the_constraints_and_every_rule_has_one():
    check = subprocess.run([sys.executable, str(REPO / "scripts" / "make_envs.py"), "--check"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    from packaging.utils import canonicalize_name

    pins = {canonicalize_name(name): version for name, version in (
        line.split("==") for line in (REPO / "constraints.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#"))}
    for env in (REPO / "envs").glob("*.yaml"):
        spec = yaml.safe_load(env.read_text())
        pip = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict))
        for entry in pip:  # every package pinned to the tested version, nothing relative
            name, version = entry.split("==")
            assert pins.get(canonicalize_name(name)) == version, entry
    rules = "".join(p.read_text() for p in (REPO / "rules").glob("*.smk"))
    envs = re.findall(r'conda:\n\s+"\.\./(envs/\w+\.yaml)"', rules)
    assert len(envs) == rules.count("conda:") and all((REPO / e).is_file() for e in envs)


def build_env_like_snakemake(env_file: Path, workdir: Path) -> Path:
    """What `--sdm conda` does with an env file, with pip instead of conda: copy it to
    .snakemake/conda/<hash>.yaml and install its pip section from there into a fresh env."""
    conda_dir = workdir / ".snakemake" / "conda"
    conda_dir.mkdir(parents=True)
    copied = conda_dir / "0123abcd.yaml"
    shutil.copy(env_file, copied)
    spec = yaml.safe_load(copied.read_text())
    pip = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict))
    (conda_dir / "0123abcd.pip.txt").write_text("\n".join(pip) + "\n")
    env = workdir / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    proc = subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", "-r", "0123abcd.pip.txt"],
                          cwd=conda_dir, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return env


def test_metrics_env_runs_a_job_and_the_light_library_installs_without_the_heavy_stack(
        tmp_path):
    workdir = tmp_path / "study"
    target = ("results/aggregated/summary/dataset=vehicle/classifier=lr-sgd/"
              "dnone_cnone_hnone.r0-1.parquet")
    snakemake(workdir, CONFIGS / "tiny.yaml", "--cores", "2", target)
    metrics = [workdir / "results/aggregated" / t / "dataset=vehicle/classifier=lr-sgd"
               / "dnone_cnone_hnone.r0-1.parquet"
               for t in ("pairwise", "summary", "per_run", "agreement", "per_sample")]
    before = {p: p.read_bytes() for p in metrics}
    for path in metrics:
        path.unlink()
    dry = snakemake(workdir, CONFIGS / "tiny.yaml", "-n", "-p", "--cores", "1", target)
    command = next(line.strip().removeprefix("Shell command: ")
                   for line in dry.stdout.splitlines() if " -m modelvar pairwise " in line)
    env = build_env_like_snakemake(REPO / "envs" / "metrics.yaml", tmp_path)
    # what a job sees under --sdm conda: the activated env's `python` first on PATH, and the
    # environment the workflow sets (rules/common.smk): MODELVAR_PYTHON=python, PYTHONPATH=src/
    job_env = {"PATH": f"{env / 'bin'}{os.pathsep}/usr/bin:/bin", "HOME": str(tmp_path),
               "MODELVAR_PYTHON": "python", "PYTHONPATH": str(REPO / "src")}
    run = subprocess.run(["bash", "-c", command], cwd=workdir, capture_output=True, text=True,
                         env=job_env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert {p: p.read_bytes() for p in metrics} == before

    # the library itself: pip install modelvar brings no torch, snakemake, xgboost or plots
    python = str(env / "bin" / "python")
    install = subprocess.run([python, "-m", "pip", "install", "--quiet",
                              "--disable-pip-version-check", "-c", str(REPO / "constraints.txt"),
                              str(REPO)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    probe = subprocess.run([python, "-c", """
import importlib.util, sys
from modelvar.metrics import pairwise_metrics, GroupedMetric, reproducibility_by_group
from modelvar.simulation import run_simulations, simulation_grid
from modelvar.simulation.dirichlet import simulate_cases
print(sorted(m for m in ("torch", "snakemake", "xgboost", "matplotlib", "seaborn", "openml")
             if importlib.util.find_spec(m)))
"""], capture_output=True, text=True, cwd=tmp_path)
    assert probe.returncode == 0 and probe.stdout.strip() == "[]", probe.stderr
    preds = tmp_path / "p.csv"
    preds.write_text("run,sample,y_true,y_pred\n" + "".join(
        f"{r},{s},{s % 2},{(s + r) % 2}\n" for r in range(3) for s in range(20)))
    cli = subprocess.run([str(env / "bin" / "modelvar"), "metrics", str(preds), "--out",
                          str(tmp_path / "pw.parquet")], capture_output=True, text=True,
                         cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    assert (tmp_path / "pw.summary.parquet").exists()
    # a subcommand that needs an extra names it, in one line (issue 24)
    plan = subprocess.run([str(env / "bin" / "modelvar"), "plan"], capture_output=True,
                          text=True, cwd=tmp_path)
    assert plan.returncode == 2, plan.stderr
    assert plan.stderr.strip().splitlines() == [
        "modelvar plan: error: it needs the 'pipeline' extra (No module named 'snakemake'): "
        "pip install 'modelvar[pipeline]'"]
