"""Stale, corrupt and hostile state at the workflow level (issue 12): verify + regenerate, file
datasets as real inputs, quoting, the interpreter, one run per results folder, kill -9."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import CONFIGS, REPO, job_counts, snakemake
from modelvar.table_files import sha256_file

pytestmark = pytest.mark.workflow

ONE_CELL = {"root_seed": 3, "classifiers": ["lr-sgd"],
            "split": {"test_fraction": 0.25, "repeats": 2, "runs": 3},
            "perturbation": {"downsample": [0.5]}}


def write_config(path: Path, **entries) -> Path:
    path.write_text(yaml.safe_dump({**ONE_CELL, **entries}))
    return path


def test_verify_finds_a_damaged_table_and_its_command_regenerates_it(tmp_path):
    from modelvar.table_files import verify

    config = write_config(tmp_path / "c.yaml", results_dir="results",
                          datasets={"vehicle": {"source": "embedded"}})
    snakemake(tmp_path, config, "--cores", "2")
    results = tmp_path / "results"
    assert verify(results)[0] == []
    table = results / "predictions/dataset=vehicle/classifier=lr-sgd/dnone_cnone_hnone.r0-1.parquet"
    table.write_bytes(table.read_bytes()[:1500])
    # the reader names the file and the command
    proc = subprocess.run([sys.executable, "-m", "modelvar", "pairwise", "--predictions",
                           str(table), "--meta", str(results / "datasets/vehicle.json"),
                           "--results", str(tmp_path / "x"), "--dataset", "vehicle",
                           "--classifier", "lr-sgd", "--job", "j"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert str(table) in proc.stderr and "truncated or corrupt" in proc.stderr
    problems, _ = verify(results)
    assert [p.path for p in problems] == [str(table.relative_to(results))]
    command = problems[0].command
    assert command.startswith(f"cd {tmp_path} && snakemake -s {REPO / 'Snakefile'}")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    fix = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env)
    assert fix.returncode == 0, fix.stderr[-2000:]
    counts = re.findall(r"^(\w+)\s+(\d+)$", fix.stdout + fix.stderr, re.M)
    ran = {rule: int(n) for rule, n in counts if rule != "total"}
    assert ran["fit"] == 1 and "prepare_dataset" not in ran  # that job and what depends on it
    assert verify(results)[0] == []

    # a copy of the folder elsewhere: its fix command repairs the copy, not the original
    import shutil

    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(results, copy)
    damaged = copy / table.relative_to(results)
    damaged.write_bytes(damaged.read_bytes()[:1500])
    before = sha256_file(table)
    problems, _ = verify(copy)
    command = problems[0].command
    assert "results_dir=elsewhere/copy " in command
    assert " elsewhere/copy/predictions/" in command  # the target inside the copy
    fix = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env)
    assert fix.returncode == 0, fix.stderr[-2000:]
    assert verify(copy)[0] == [] and sha256_file(table) == before


def test_the_fix_command_works_for_an_absolute_results_dir_inside_the_working_directory(
        tmp_path):
    """Issue 58: the target was made relative to the working directory while the rules name
    absolute paths (Snakemake's MissingRuleException)."""
    from modelvar.table_files import verify

    results = tmp_path / "abs-results"
    config = write_config(tmp_path / "c.yaml", results_dir=str(results),
                          split={"test_fraction": 0.25, "repeats": 1, "runs": 2},
                          datasets={"vehicle": {"source": "embedded"}})
    snakemake(tmp_path, config, "--cores", "2")
    table = results / "predictions/dataset=vehicle/classifier=lr-sgd/dnone_cnone_hnone.r0.parquet"
    table.write_bytes(table.read_bytes()[:1500])
    problems, _ = verify(results)
    command = problems[0].command
    assert f" --force {table} all" in command, command
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    fix = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env)
    assert fix.returncode == 0, fix.stderr[-2000:]
    assert verify(results)[0] == []


def test_a_resume_redoes_a_job_changed_in_place_and_moves_strays_aside(tmp_path):
    """Issue 58: a same-size corruption survived a resume ("Nothing to be done", exit 0), and
    a run with nothing to do left a stray in a partition without a word."""
    config = write_config(tmp_path / "c.yaml", results_dir="results",
                          split={"test_fraction": 0.25, "repeats": 1, "runs": 2},
                          datasets={"vehicle": {"source": "embedded"}})
    snakemake(tmp_path, config, "--cores", "2")
    table = (tmp_path / "results/predictions/dataset=vehicle/classifier=lr-sgd/"
             "dnone_cnone_hnone.r0.parquet")
    good = table.read_bytes()
    data = bytearray(good)
    data[len(data) // 2] ^= 0xFF
    table.write_bytes(bytes(data))
    proc = snakemake(tmp_path, config, "--cores", "2")
    out = proc.stdout + proc.stderr
    assert "predictions/dataset=vehicle/classifier=lr-sgd/dnone_cnone_hnone.r0.parquet was " \
        "changed since the job wrote it" in out and "the job runs again" in out, out[-3000:]
    assert job_counts(out)["fit"] == 1
    assert table.read_bytes() == good  # the same bits as the first run
    notes = table.parent / "notes.txt"
    notes.write_text("mine")
    proc = snakemake(tmp_path, config, "--cores", "2")
    out = proc.stdout + proc.stderr
    assert "Nothing to be done" in out and "moved 1 file(s) that no job wrote" in out, out
    assert not notes.exists()
    assert (tmp_path / "results/.modelvar/strays/predictions/dataset=vehicle/"
            "classifier=lr-sgd/notes.txt").read_text() == "mine"


HOSTILE = "it's a $(touch PWNED) dir"


def test_file_dataset_at_a_hostile_path_is_a_real_input(tmp_path):
    folder = tmp_path / HOSTILE
    folder.mkdir()
    data = folder / "my vehicle's data.csv"
    source = pd.read_csv(REPO / "src/modelvar/data/embedded/vehicle.csv")
    source.to_csv(data, index=False)
    config = write_config(tmp_path / "c.yaml", results_dir="results", datasets={
        "mine": {"source": "file", "path": str(data), "target": "Class"},
        "vehicle": {"source": "embedded"}})
    snakemake(tmp_path, config, "--cores", "2", "results/datasets/mine.json",
              "results/datasets/vehicle.json")
    assert not list(tmp_path.rglob("PWNED")) and not (REPO / "PWNED").exists()
    meta = json.loads((tmp_path / "results/datasets/mine.json").read_text())
    assert meta["provenance"]["file_sha256"] == sha256_file(data)
    assert meta["n_samples"] == 846
    # same content, nothing to do; new content reruns exactly that dataset's prepare job
    dry = snakemake(tmp_path, config, "-n", "--cores", "1", "results/datasets/mine.json",
                    "results/datasets/vehicle.json")
    assert "Nothing to be done" in dry.stdout + dry.stderr
    source.assign(COMPACTNESS=source["COMPACTNESS"] + 1).to_csv(data, index=False)
    dry = snakemake(tmp_path, config, "-n", "--cores", "1", "results/datasets/mine.json",
                    "results/datasets/vehicle.json")
    assert job_counts(dry.stdout) == {"prepare_dataset": 1, "total": 1}
    assert "wildcards: dataset=mine" in dry.stdout
    # and a whole study on that dataset runs through every rule
    snakemake(tmp_path, config, "--cores", "2", "results/aggregated/summary/dataset=mine/"
              "classifier=lr-sgd/dnone_cnone_hnone.r0-1.parquet")
    assert not list(tmp_path.rglob("PWNED"))


def test_every_value_in_a_shell_command_is_quoted():
    unquoted, commands = [], 0
    for smk in sorted((REPO / "rules").glob("*.smk")):
        shells = r'shell:\n\s+modelvar_job(?:_from_file)?\(\n((?:\s+".*"\n)+)'
        for command in re.findall(shells, smk.read_text()):
            commands += 1
            for field in re.findall(r"(?<!\{)\{([^{}]+)\}(?!\})", command):
                if field != "threads" and not field.endswith(":q"):
                    unquoted.append(f"{smk.name}: {{{field}}}")
    text = "".join(p.read_text() for p in (REPO / "rules").glob("*.smk"))
    assert commands == text.count("    shell:") == 14 and unquoted == []


def test_jobs_run_the_workflows_interpreter_without_the_venv_on_path(tmp_path):
    config = write_config(tmp_path / "c.yaml", results_dir="results",
                          datasets={"vehicle": {"source": "embedded"}})
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "snakemake"), "-s", str(REPO / "Snakefile"),
         "--directory", str(tmp_path), "--configfile", str(config), "--cores", "1",
         "results/datasets/vehicle.json"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "No module named modelvar" not in proc.stderr


def test_second_run_on_the_same_results_from_another_directory_is_refused(tmp_path):
    results = tmp_path / "shared-results"
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    config = write_config(tmp_path / "c.yaml", results_dir=str(results),
                          datasets={"vehicle": {"source": "embedded"}},
                          classifier_settings={"lr-sgd": {"hparams": {"alpha": 0.001}}})
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--configfile",
           str(config), "--cores", "1"]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    running = subprocess.Popen([*cmd, "--directory", str(first)], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env=env,
                               start_new_session=True)
    lock = results / ".modelvar" / "run.lock"
    deadline = time.time() + 120
    while not (lock.exists() and lock.read_text()) and time.time() < deadline:
        time.sleep(0.2)
    assert lock.read_text(), "the first run never started"
    # The first run is paused (it keeps its lock) while the second one tries: however fast the
    # first run's jobs are, it is alive when the second one starts.
    os.killpg(running.pid, signal.SIGSTOP)
    try:
        other = subprocess.run([*cmd, "--directory", str(second)], capture_output=True,
                               text=True, env=env)
    finally:
        os.killpg(running.pid, signal.SIGCONT)
    output = running.communicate(timeout=300)[0]
    assert running.returncode == 0, output[-3000:]
    assert other.returncode != 0
    assert "is in use by another modelvar run" in other.stdout + other.stderr
    assert str(first) in other.stdout + other.stderr  # names the running one
    # once the first run ended, the lock is free again
    assert "Nothing to be done" in subprocess.run(
        [*cmd, "--directory", str(second)], capture_output=True, text=True, env=env).stderr


def test_run_sh_recovers_from_a_killed_run(tmp_path):
    config = write_config(tmp_path / "c.yaml", results_dir="results",
                          datasets={"vehicle": {"source": "embedded"}},
                          classifiers=["lr-sgd", "svm-sgd"])
    env = dict(os.environ, MODELVAR_VENV=str(Path(sys.executable).parents[1]))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    killed = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
         str(tmp_path), "--configfile", str(config), "--cores", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    locks = tmp_path / ".snakemake" / "locks"
    deadline = time.time() + 120
    while not (locks.is_dir() and any(locks.iterdir())) and time.time() < deadline:
        time.sleep(0.1)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    assert any(locks.iterdir()), "the killed run left no lock: nothing to test"
    plain = snakemake(tmp_path, config, "--cores", "1", check=False)
    assert plain.returncode != 0 and "cannot be locked" in plain.stdout + plain.stderr
    # what a write cut by kill -9 leaves (issue 20): removed when the next run starts
    stray = tmp_path / "results" / "predictions" / ".dnone_cnone_hnone.r0.parquet.modelvar-k3x9.tmp"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"PAR1 half a table")
    proc = subprocess.run(["bash", str(REPO / "scripts" / "run.sh"), "--directory",
                           str(tmp_path), "--configfile", str(config)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "was interrupted and left Snakemake's lock behind" in proc.stderr
    assert (tmp_path / "results" / "report.html").exists()
    assert not stray.exists() and "removed 1 temporary file(s) of interrupted writes" in \
        proc.stderr
    from modelvar.table_files import verify

    assert verify(tmp_path / "results")[0] == []


def test_unlock_stale_leaves_a_live_runs_lock_alone(tmp_path):
    from modelvar.running.run_lock import hold_activity_lock, unlock_if_stale

    (tmp_path / ".snakemake" / "locks").mkdir(parents=True)
    (tmp_path / ".snakemake" / "locks" / "0.output.lock").write_text("x")
    hold_activity_lock(tmp_path)  # this process stands for a live run
    assert unlock_if_stale(tmp_path, ["--configfile", str(CONFIGS / "tiny.yaml")]) is None
    assert (tmp_path / ".snakemake" / "locks" / "0.output.lock").exists()
