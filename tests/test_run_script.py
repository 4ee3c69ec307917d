"""The README's main command, ``bash scripts/run.sh``, with a user's own config (issue 12)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import CONFIGS, REPO
from modelvar.pipeline.workflow_config import ConfigError, get_key, resolve

pytestmark = pytest.mark.workflow


def run_sh(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, MODELVAR_VENV=str(Path(sys.executable).parents[1]))
    return subprocess.run(["bash", str(REPO / "scripts" / "run.sh"), *args], capture_output=True,
                          text=True, env=env, timeout=timeout)


def test_run_sh_with_own_config_reports_into_its_results_dir(tmp_path):
    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config["results_dir"] = str(tmp_path / "my-study")
    del config["grouped"]
    path = tmp_path / "my.yaml"
    path.write_text(yaml.safe_dump(config))
    report = tmp_path / "my-study" / "report.html"

    dry = run_sh("--configfile", str(path), "-n")
    assert dry.returncode == 0, dry.stderr
    assert not report.exists()

    first = run_sh("--configfile", str(path))
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert report.stat().st_size > 10_000
    assert f"report: {report}" in first.stdout
    assert not (REPO / "results" / "report.html").exists() or \
        (REPO / "results" / "report.html").stat().st_mtime < report.stat().st_mtime - 1

    report.unlink()  # "Nothing to be done" still writes the report
    again = run_sh("--configfile", str(path))
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Nothing to be done" in again.stdout + again.stderr
    assert report.stat().st_size > 10_000


def test_config_resolution_merges_files_in_order_then_config_entries(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(yaml.safe_dump({"results_dir": "from-a", "split": {"repeats": 3, "runs": 4}}))
    b.write_text(yaml.safe_dump({"results_dir": "from-b", "split": {"runs": 7}}))
    got = resolve(["--configfile", str(a), str(b)])
    assert got.config["split"] == {"repeats": 3, "runs": 7}  # recursive merge, later wins
    assert got.results_dir == Path.cwd() / "from-b"
    got = resolve(["--configfile", str(a), str(b), "--config", "results_dir=cli",
                   "--directory", str(tmp_path)])
    assert got.results_dir == tmp_path / "cli" and got.executes
    assert not resolve(["--configfile", str(a), "-n"]).executes
    assert not resolve(["--configfile", str(a), "--unlock"]).executes


def test_config_resolution_default_config_and_errors(tmp_path):
    got = resolve(["--config", "results_dir=elsewhere"], snakefile_dir=REPO)
    assert got.configfiles == (REPO / "config" / "config.yaml",)
    assert "anneal" in got.config["datasets"] and got.config["results_dir"] == "elsewhere"
    assert get_key(got.config, "split.repeats") == 5
    with pytest.raises(ConfigError, match="no key 'split.nosuch'"):
        get_key(got.config, "split.nosuch")
    with pytest.raises(ConfigError, match="does not exist"):
        resolve(["--configfile", str(tmp_path / "missing.yaml")])
