from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CONFIGS = Path(__file__).resolve().parent / "configs"
SCHEMA_PATH = REPO / "workflow" / "schemas" / "config.schema.yaml"


#: the source of a small estimator of a user's own (``file.py:Class`` in a config): nearest
#: centroid, fitted on the class indices; tests append subclasses that misbehave
CENTROID_SOURCE = """
import numpy as np


class Centroid:
    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.centroids_ = np.array([X[y == c].mean(axis=0) for c in self.classes_])
        return self

    def predict(self, X):
        d = ((X[:, None, :] - self.centroids_[None]) ** 2).sum(axis=2)
        return self.classes_[d.argmin(axis=1)]
"""


def completed(config: dict) -> dict:
    """A config built by hand, completed in place as the workflow's check completes it: the
    schema's defaults and the families' control levels filled in
    (:func:`modelvar.planning.config_check.with_defaults`)."""
    import yaml

    from modelvar.planning.config_check import with_defaults

    return with_defaults(config, yaml.safe_load(SCHEMA_PATH.read_text()))


def snakemake(workdir: Path, configfile: Path, *args: str, check: bool = True,
              timeout: int = 600, snakefile: Path | None = None) -> subprocess.CompletedProcess:
    """Run the repository's workflow (or ``snakefile``) in ``workdir`` with this interpreter."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    cmd = [sys.executable, "-m", "snakemake", "-s", str(snakefile or REPO / "Snakefile"),
           "--directory", str(workdir), "--configfile", str(configfile), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def job_counts(output: str) -> dict[str, int]:
    """Parse the 'Job stats' table of a Snakemake dry run."""
    block = output.split("Job stats:", 1)[1]
    counts = {}
    for line in block.splitlines()[3:]:
        match = re.match(r"^(\S+)\s+(\d+)$", line.strip())
        if not match:
            break
        counts[match.group(1)] = int(match.group(2))
    return counts


def dry_run_jobs(output: str) -> list[tuple[str, list[str], list[str]]]:
    """(rule, inputs, outputs) of every job a Snakemake dry run lists."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        if rule:
            files = {key: re.search(rf"^\s+{key}: (.*)$", block, re.M) for key in ("input",
                                                                                  "output")}
            jobs.append((rule.group(1), *(m.group(1).split(", ") if m else []
                                          for m in files.values())))
    return jobs


def manifest_of(outputs: list[str]) -> str:
    """The one manifest among a job's outputs (every rule declares one)."""
    (manifest,) = [f for f in outputs if "/.modelvar/manifests/" in f]
    return manifest


def copy_workflow(dest: Path) -> Path:
    """A copy of the workflow and library sources, to edit without touching the repository."""
    import shutil

    dest.mkdir(parents=True)
    shutil.copy(REPO / "Snakefile", dest / "Snakefile")
    for sub in ("rules", "workflow", "envs", "config"):
        shutil.copytree(REPO / sub, dest / sub)
    shutil.copytree(REPO / "src" / "modelvar", dest / "src" / "modelvar",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest


@pytest.fixture
def tmp_config(tmp_path):
    """Write a config variant: tmp_config(base_name, **overrides_as_yaml_text)."""
    import yaml

    def make(base: str, mutate) -> Path:
        data = yaml.safe_load((CONFIGS / base).read_text())
        mutate(data)
        path = tmp_path / f"variant-{base}"
        path.write_text(yaml.safe_dump(data))
        return path

    return make


def planted_page(datasets: int, seed: int, repeats: int = 5) -> dict:
    """The tables of a judged Findings page of ``datasets`` simulated datasets with planted
    effects (modelvar.calibration.pages, scenario "planted"): what the Findings' figures draw."""
    import numpy as np

    from modelvar.calibration import pages as calibration
    from modelvar.findings.study import judge_study

    tables, _ = calibration.simulate_page(calibration.SCENARIOS["planted"], repeats=repeats,
                                          datasets=datasets, rng=np.random.default_rng(seed))
    return judge_study(tables["summary"], tables["agreement"], tables["runs"],
                       tables["roles"], weak_below=0.5).tables


@pytest.fixture
def width():
    """Set the figure set's width for one test (``width("single")``), restored after it."""
    from modelvar.plots import common

    before = common.figure_width()
    yield common.set_width
    common.set_width(before)
