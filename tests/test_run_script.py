"""The README's main command, ``bash scripts/run.sh``, with a user's own config (issue 12)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import CENTROID_SOURCE, CONFIGS, REPO, job_counts
from modelvar.running.workflow_config import ConfigError, get_key, resolve

pytestmark = pytest.mark.workflow


def run_sh(*args: str, timeout: int = 600, cwd: Path | None = None
           ) -> subprocess.CompletedProcess:
    env = dict(os.environ, MODELVAR_VENV=str(Path(sys.executable).parents[1]))
    return subprocess.run(["bash", str(REPO / "scripts" / "run.sh"), *args], capture_output=True,
                          text=True, env=env, timeout=timeout, cwd=cwd)


def test_run_sh_from_the_users_folder_with_relative_paths(tmp_path):
    """Relative paths mean what they mean where run.sh is called from (issue 24): the config
    file, its results_dir and targets; a folder with its own config/config.yaml plans that
    config, not the repository's (issue 20). The results folder is kept out of git, and the
    run says how to get the modelvar command."""
    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config["results_dir"] = "my-study"
    del config["grouped"]
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    report = tmp_path / "my-study" / "report.html"

    dry = run_sh("--configfile", "config/config.yaml", "-n", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert "vehicle" in dry.stdout + dry.stderr and "anneal" not in dry.stdout + dry.stderr
    assert not report.exists()

    first = run_sh("--configfile", "config/config.yaml", cwd=tmp_path)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert report.stat().st_size > 10_000
    assert f"report: {report}" in first.stdout
    venv = Path(sys.executable).parents[1]
    assert f"source {venv}/bin/activate" in first.stdout
    assert (venv / "bin" / "modelvar").exists()
    assert (tmp_path / ".snakemake").is_dir() and not (REPO / "my-study").exists()
    assert (tmp_path / "my-study" / ".gitignore").read_text().splitlines()[-1] == "*"
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    ignored = subprocess.run(["git", "-C", str(tmp_path), "check-ignore", "-q",
                              "my-study/report.html"])
    assert ignored.returncode == 0  # git ignores the results folder

    report.unlink()  # "Nothing to be done" still writes the report
    again = run_sh("--configfile", "config/config.yaml", cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Nothing to be done" in again.stdout + again.stderr
    assert report.stat().st_size > 10_000

    # a relative target means the file in the caller's folder
    listed = run_sh("--configfile", "config/config.yaml", "-n", "--forceall",
                    "my-study/datasets/vehicle.parquet", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert job_counts(listed.stdout) == {"prepare_dataset": 1, "total": 1}


def test_run_sh_with_an_absolute_config_reports_into_its_results_dir(tmp_path):
    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config["results_dir"] = str(tmp_path / "abs-study")
    del config["grouped"]
    path = tmp_path / "my.yaml"
    path.write_text(yaml.safe_dump(config))
    dry = run_sh("--configfile", str(path), "-n", cwd=REPO)
    assert dry.returncode == 0, dry.stderr
    got = subprocess.run([sys.executable, "-m", "modelvar", "config", "--get", "results_dir",
                          "--", "--configfile", str(path)], capture_output=True, text=True,
                         cwd=REPO)
    assert got.stdout.strip() == str(tmp_path / "abs-study")


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


@pytest.mark.parametrize(("text", "message"), [
    ("__use_yte__: true\nroot_seed: ?__import__('os').getpid()\n", "templating"),
    ("root_seed: 1\nsplit: {repeats: 2}\nroot_seed: 2\n", "key 'root_seed' is given twice"),
    ("root_seed: 1\n\tresults_dir: x\n", "is not valid YAML"),
    ("root_seed: !!python/object/apply:os.getpid []\n", "is not valid YAML"),
    ("- a\n- b\n", "must hold a mapping"),
    ("a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c]\n"
     "grouped: {by: {x: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d]}}\n",
     "expands to more than 100,000 values"),
])
def test_a_config_file_is_read_safely_before_snakemake_reads_it(tmp_path, text, message):
    """Issue 20: no code runs from a config, duplicate keys and alias bombs are refused, and
    YAML errors are one line naming the file (also through run.sh, before any job)."""
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        resolve(["--configfile", str(path)])
    proc = run_sh("--configfile", str(path), "-n", cwd=tmp_path)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert message.split(" (")[0] in proc.stderr
    assert not list(tmp_path.glob("*.pid"))


@pytest.mark.parametrize("results_dir", [".", "/", ".."])
def test_a_results_dir_that_holds_the_working_directory_is_refused(tmp_path, results_dir):
    from modelvar.planning.config_check import results_dir_problems

    work = tmp_path / "work"
    work.mkdir()
    problems = results_dir_problems({"results_dir": results_dir}, work)
    assert len(problems) == 1 and "a folder of their own" in problems[0]
    assert results_dir_problems({"results_dir": "results"}, work) == []


def test_a_results_dir_inside_the_checkout_is_refused_from_elsewhere(tmp_path):
    """From elsewhere, results inside modelvar's checkout would mix with its code (a dry run
    wrote there); from the checkout, its results/ is the README's default."""
    from modelvar.planning.config_check import CHECKOUT, results_dir_problems

    assert CHECKOUT == REPO.resolve()
    inside = str(REPO / "results-of-elsewhere")
    problems = results_dir_problems({"results_dir": inside}, tmp_path)
    assert problems == [
        f"results_dir: {inside!r} is {REPO.resolve() / 'results-of-elsewhere'}, inside "
        f"modelvar's checkout {REPO.resolve()}, while the workflow runs from "
        f"{tmp_path.resolve()}: give the results a folder outside the checkout (e.g. "
        "results, here), or run from the checkout"]
    assert results_dir_problems({"results_dir": "results"}, REPO) == []
    assert results_dir_problems({"results_dir": inside}, REPO / "config") == []
    proc = run_sh("--config", f"results_dir={inside}", "-n", cwd=tmp_path)
    assert proc.returncode != 0 and "inside modelvar's checkout" in proc.stderr
    assert not (REPO / "results-of-elsewhere").exists()


def _stopped_run_sh(tmp_path: Path, config: dict, *, settle: float = 0.0,
                    **env: str) -> str:
    """run.sh on ``config`` in ``tmp_path``, sent SIGTERM once a fit job has started (and
    ``settle`` seconds more); returns its stderr once it has ended and no process of the run
    is left (asserted; any left is killed)."""
    import signal
    import time

    (tmp_path / "my.yaml").write_text(yaml.safe_dump(config))
    env = dict(os.environ, MODELVAR_VENV=str(Path(sys.executable).parents[1]), **env)
    log = tmp_path / "run.sh.err"  # a file: a pipe nobody reads until the end could fill
    with open(log, "w") as err:
        proc = subprocess.Popen(["bash", str(REPO / "scripts" / "run.sh"), "--configfile",
                                 "my.yaml", "--cores", "1"], cwd=tmp_path, env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.time() + 180
        while time.time() < deadline and not list((tmp_path / "results" / "logs").glob(
                "fit*/**/*.log")):
            time.sleep(0.5)
        assert list((tmp_path / "results" / "logs").glob("fit*/**/*.log")), "no fit started"
        time.sleep(settle)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
        deadline = time.time() + 60
        while time.time() < deadline and _processes_in(tmp_path):
            time.sleep(0.5)
        assert _processes_in(tmp_path) == []
        return log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _processes_in(tmp_path):
            os.kill(pid, 9)


def test_sigterm_to_run_sh_stops_snakemake_and_its_jobs(tmp_path):
    """Issue 20: SIGTERM to run.sh reaches Snakemake, which stops its jobs: nothing of the
    run is left running."""
    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config["classifiers"] = ["mlp"]
    config["classifier_settings"] = {"mlp": {"epochs": 200}}
    del config["grouped"]
    _stopped_run_sh(tmp_path, config)


STUBBORN = CENTROID_SOURCE + '''

import signal
import time


class Stubborn(Centroid):
    """Its fit blocks SIGINT and SIGTERM and does not return: a job stuck in a library's C
    code (OpenBLAS's start-up under a memory limit), where no Python handler can act."""

    def fit(self, X, y):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        time.sleep(600)
        return super().fit(X, y)
'''


def test_a_job_that_ignores_the_stop_is_killed_from_outside(tmp_path):
    """Issue 58: kill -TERM of run.sh did not end a job spinning in OpenBLAS's start-up in
    55 s; only kill -9 did. What is left of Snakemake's process group MODELVAR_STOP_SECONDS
    after the stop is killed, and run.sh says so."""
    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config["classifiers"] = [{"name": "stubborn", "estimator": "stubborn.py:Stubborn",
                              "seconds_per_fit": 0.01}]
    del config["grouped"]
    (tmp_path / "stubborn.py").write_text(STUBBORN)
    err = _stopped_run_sh(tmp_path, config, settle=3, MODELVAR_STOP_SECONDS="3")
    assert "jobs still running 3 s after the stop: killed" in err, err[-3000:]


def _processes_in(folder: Path) -> list[int]:
    """Processes whose working directory is ``folder`` (Snakemake and its jobs)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if Path(os.readlink(entry / "cwd")) == folder:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_setup_recreates_a_venv_whose_creation_was_interrupted(tmp_path):
    """A venv killed while it was being made has a python but no pip: every later setup failed
    with "No module named pip" (issue 20). Here the install after the repair fails at once (no
    package index), which is not what this test checks."""
    venv = tmp_path / "venv"
    python = sys.executable if not hasattr(sys, "base_prefix") else \
        str(Path(sys.base_prefix) / "bin" / "python3")
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    broken = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "--version"],
                            capture_output=True, text=True)
    assert "No module named pip" in broken.stderr
    env = {**os.environ, "MODELVAR_VENV": str(venv), "PYTHON": python, "PIP_NO_INDEX": "1",
           "PIP_FIND_LINKS": str(tmp_path)}
    proc = subprocess.run(["bash", str(REPO / "scripts" / "setup-venv.sh")], env=env,
                          capture_output=True, text=True, timeout=300)
    assert f"recreating virtual environment {venv}" in proc.stderr
    assert "No module named pip" not in proc.stderr
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "--version"], check=True,
                   capture_output=True)
