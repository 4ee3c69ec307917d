"""Deployed as any Snakemake workflow (issue 69): found where the catalog, snakedeploy and
`snakemake -s gh:…` look, the same workflow from the root Snakefile, usable as a module read from
a tagged repository (no source tree on disk), and a lint or dry run fits nothing."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import CONFIGS, REPO, copy_workflow, dry_run_jobs, job_counts, snakemake


def catalog_snakefile(repo: Path) -> Path | None:
    """The Snakemake Workflow Catalog generator's lookup (scripts/generate-catalog.py in
    snakemake-workflow-catalog): with a ``workflow/`` folder only ``workflow/Snakefile``
    counts, else the root's ``Snakefile``; None where the repository is skipped."""
    path = repo / "workflow" / "Snakefile" if (repo / "workflow").is_dir() else repo / "Snakefile"
    return path if path.is_file() else None


def test_the_catalogs_lookup_finds_the_workflow_and_the_root_snakefile_includes_it(tmp_path):
    found = catalog_snakefile(REPO)
    assert found == REPO / "workflow" / "Snakefile"
    text = found.read_text()
    assert "rule all:" in text and 'min_version("9.19")' in text
    assert 'include: "workflow/Snakefile"' in (REPO / "Snakefile").read_text()
    # the replay can fail: a repository with workflow/ but its Snakefile at the root is skipped
    (tmp_path / "workflow").mkdir()
    (tmp_path / "Snakefile").write_text("rule all:\n    input: []\n")
    assert catalog_snakefile(tmp_path) is None


def _study(tmp_path: Path, **jobs) -> Path:
    """tiny.yaml with its results in tmp_path/results (absolute) and ``jobs`` settings."""
    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config["results_dir"] = str(tmp_path / "results")
    config["jobs"] = {**config.get("jobs", {}), **jobs}
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.workflow
def test_the_root_and_the_workflow_snakefile_make_the_same_jobs(tmp_path):
    config = _study(tmp_path)
    root = snakemake(tmp_path, config, "-n", "--cores", "1", snakefile=REPO / "Snakefile")
    inner = snakemake(tmp_path, config, "-n", "--cores", "1",
                      snakefile=REPO / "workflow" / "Snakefile")
    jobs = sorted(dry_run_jobs(root.stdout))
    assert jobs == sorted(dry_run_jobs(inner.stdout))
    assert job_counts(root.stdout)["all"] == 1 and len(jobs) == job_counts(root.stdout)["total"]


@pytest.mark.workflow
def test_a_lint_writes_nothing_and_a_dry_run_fits_nothing(tmp_path):
    """Parsing runs nothing: a lint leaves the results folder unmade; a dry run of a study
    whose plan probes its data fits nothing, says it planned without probes, and lists the jobs
    of the plan `modelvar plan` probes and caches once that has run."""
    config = _study(tmp_path, data_probe_seconds=4)
    results = tmp_path / "results"
    lint = snakemake(tmp_path, config, "--lint", snakefile=REPO / "workflow" / "Snakefile")
    assert "probing" not in lint.stderr and not results.exists()
    dry = snakemake(tmp_path, config, "-n", "--cores", "1")
    assert "probing" not in dry.stderr
    assert "planned without probe fits" in dry.stderr and "lr-sgd on vehicle" in dry.stderr
    assert not (results / ".modelvar" / "data-probes.json").exists()
    planned = subprocess.run([sys.executable, "-m", "modelvar", "plan", "--configfile",
                              str(config)], cwd=tmp_path, capture_output=True, text=True,
                             timeout=300)
    assert planned.returncode == 0, planned.stderr
    assert (results / ".modelvar" / "data-probes.json").is_file()
    again = snakemake(tmp_path, config, "-n", "--cores", "1")
    assert "planned without probe fits" not in again.stderr and "probing" not in again.stderr


HOST = """\
configfile: "config/config.yaml"


module modelvar:
    snakefile:
        "git+file:{repository}/workflow/Snakefile@{tag}"
    config:
        config


use rule * from modelvar
"""


@pytest.mark.workflow
def test_a_module_read_from_a_tagged_repository_runs_a_tiny_study(tmp_path):
    """What snakedeploy makes (README, "Deploy into your own project"): the project's own
    config/ and a Snakefile with a module read from a tagged checkout elsewhere and `use rule
    *`. The checkout's files are deleted after tagging, so the rules come from the repository
    and the library from the environment, never from a source tree beside the rules."""
    repository = copy_workflow(tmp_path / "modelvar-checkout")
    git = ["git", "-C", str(repository), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "modelvar"], check=True)
    subprocess.run([*git, "tag", "v0.1.0"], check=True)
    for entry in repository.iterdir():
        if entry.name != ".git":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    project = tmp_path / "my-project"
    (project / "config").mkdir(parents=True)
    shutil.copy(CONFIGS / "tiny.yaml", project / "config" / "config.yaml")
    (project / "Snakefile").write_text(HOST.format(repository=repository, tag="v0.1.0"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2"], cwd=project,
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (project / "results" / "vehicle" / "figures" / "ec_distributions.png").is_file()
    assert (project / "results" / "findings" / "answer.rst").is_file()
    assert sorted(p.name for p in repository.iterdir()) == [".git"]  # nothing read from disk
    dry = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1"], cwd=project,
                         capture_output=True, text=True, env=env, timeout=300)
    assert "Nothing to be done" in dry.stdout + dry.stderr, dry.stdout
