"""Faults at the edges of a run (issue 49): no job outlives the run that started it, a memory
limit is named, a full disk or unwritable folder at the end of a run is one line and never a
truncated file, and SLURM tools without a controller do not stall a local run."""

from __future__ import annotations

import errno
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from conftest import CONFIGS, REPO
from modelvar import run_watch

PYTHON = sys.executable
ENV = dict(os.environ, PYTHONPATH=str(REPO / "src"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie has ended
        return fh.read().rsplit(")", 1)[1].split()[0] != "Z"


def _wait_until(check, seconds: float = 120) -> bool:
    """Poll ``check`` until it holds (an event's deadline, not a speed target)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return check()


# ------------------------------------------------------------------ no orphan jobs
def test_the_watch_entries_name_this_host_and_tell_a_reused_pid_apart():
    environ: dict[str, str] = {}
    run_watch.add_to_environment(environ=environ)
    run_watch.add_to_environment(environ=environ)  # once
    [(pid, started)] = run_watch.watched(environ)
    assert pid == os.getpid() and started == run_watch.start_time(os.getpid())
    assert run_watch.alive(pid, started)
    assert not run_watch.alive(pid, str(int(started) + 1))  # a later process with this pid
    environ[run_watch.WATCH_VARIABLE] += " elsewhere.example:1:5 junk"
    assert run_watch.watched(environ) == [(pid, started)]


@pytest.mark.parametrize("sigint_ignored", [False, True])
def test_a_busy_job_stops_when_the_process_that_started_it_ends(tmp_path, sigint_ignored):
    """A job spinning at 100 % of a core (as the orphaned findings job did) ends with a line in
    its log once its run's process is gone; its own cleanup runs (Ctrl-C semantics), also where
    it started with SIGINT ignored (as under a run started in the background by a script)."""
    parent = subprocess.Popen([PYTHON, "-c", "import time; time.sleep(600)"])
    try:
        env = dict(ENV, **{run_watch.WATCH_VARIABLE: run_watch.entry(parent.pid)})
        job = subprocess.Popen([PYTHON, "-c", textwrap.dedent(f"""
            from pathlib import Path
            from modelvar.run_watch import watch
            assert watch("findings")
            try:
                while True:
                    pass
            finally:
                Path({str(tmp_path / "cleaned")!r}).write_text("yes")
            """)], env=env, stderr=subprocess.PIPE, text=True,
            preexec_fn=lambda: signal.signal(
                signal.SIGINT, signal.SIG_IGN if sigint_ignored else signal.SIG_DFL))
        time.sleep(1)
        assert job.poll() is None  # watched, still running while its run lives
        parent.kill()
        parent.wait()
        try:
            job.wait(timeout=120)
        finally:
            job.kill()
        assert "modelvar findings: the process that started this job (pid " \
            f"{parent.pid}: Snakemake or run.sh) has ended; stopping this job" in job.stderr.read()
        assert (tmp_path / "cleaned").read_text() == "yes"
    finally:
        parent.kill()


def test_a_job_whose_run_was_killed_hard_ends_too(tmp_path):
    """kill -9 of Snakemake itself (as a memory limit ends it): its running fit job ends
    instead of running on for minutes."""
    from test_run_script import _processes_in

    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config["classifiers"] = ["mlp"]
    config["classifier_settings"] = {"mlp": {"epochs": 400}}
    del config["grouped"]
    (tmp_path / "my.yaml").write_text(yaml.safe_dump(config))
    env = dict(os.environ, PATH=f"{Path(PYTHON).parent}{os.pathsep}{os.environ['PATH']}")
    snakemake = subprocess.Popen(
        [PYTHON, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--configfile", "my.yaml",
         "--cores", "1"], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        logs = tmp_path / "results" / "logs"
        assert _wait_until(lambda: list(logs.glob("fit*/**/*.log")), 300), "no fit started"
        jobs = [p for p in _processes_in(tmp_path) if p != snakemake.pid]
        assert jobs
        snakemake.kill()
        snakemake.wait()
        assert _wait_until(lambda: not any(_alive(p) for p in jobs)), "a job outlived its run"
        text = next(logs.glob("fit*/**/*.log")).read_text()
        assert "the process that started this job" in text
    finally:
        snakemake.kill()
        for pid in _processes_in(tmp_path):
            os.kill(pid, signal.SIGKILL)


HUNGRY = textwrap.dedent("""
    import numpy as np


    class Hungry:
        def fit(self, X, y):
            self.ballast_ = np.ones(4 * 2**30, dtype=np.uint8)  # 4 GiB
            self.classes_ = np.unique(y)
            return self

        def predict(self, X):
            return np.full(len(X), self.classes_[0])
    """)


def test_a_run_under_a_memory_limit_says_memory_and_leaves_no_job(tmp_path):
    """A fit job that asks for more than the shell's `ulimit -v` allows: the run fails with the
    job's one line and run.sh's, naming the limit, and no process of it is left. (The limit
    leaves room for the libraries' imports: under a tighter one OpenBLAS's start-up may spin
    instead of failing, which no code of ours could tell from work.)"""
    from test_run_script import _processes_in

    (tmp_path / "hungry.py").write_text(HUNGRY)
    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    config["classifiers"] = [{"name": "hungry", "estimator": "hungry.py:Hungry",
                              "seconds_per_fit": 0.01}]
    # jobs that ask for less than the limit less a start-up: the run starts (issue 58)
    config["resources"] = {group: {"mem_mb": 1000}
                           for group in ("prepare", "aggregate", "plot", "simulate")}
    del config["grouped"]
    (tmp_path / "my.yaml").write_text(yaml.safe_dump(config))
    env = dict(os.environ, MODELVAR_VENV=str(Path(PYTHON).parents[1]))
    limit_kb = 3_000_000

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (limit_kb * 1024, limit_kb * 1024))

    proc = subprocess.run(["bash", str(REPO / "scripts" / "run.sh"), "--configfile", "my.yaml",
                           "--cores", "2"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600, preexec_fn=limited)
    assert proc.returncode != 0
    assert f"with a virtual-memory limit in force (ulimit -v {limit_kb} kB)" in proc.stderr, \
        proc.stderr[-3000:]
    logs = "".join(p.read_text() for p in (tmp_path / "results/logs/fit").rglob("*.log"))
    assert "error: hungry.fit failed on vehicle, cell " in logs, logs[-3000:]
    assert "MemoryError: Unable to allocate 4.00 GiB" in logs
    assert _wait_until(lambda: not _processes_in(tmp_path), 60)


def test_a_job_out_of_memory_says_memory(monkeypatch, capsys):
    from modelvar import cli

    def no_memory(args):
        raise MemoryError

    def no_thread(args):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(cli, "cmd_datasets", no_memory)
    assert cli.main(["datasets"]) == 2
    assert capsys.readouterr().err.strip() == (
        "modelvar datasets: error: out of memory (MemoryError); a job's memory is its "
        "resources.*.mem_mb (and any `ulimit -v` of the shell that started it)")
    monkeypatch.setattr(cli, "cmd_datasets", no_thread)
    assert cli.main(["datasets"]) == 2
    assert "out of memory for a new thread" in capsys.readouterr().err


# ------------------------------------------------------------------ disks and folders
def _file_size_limited(limit: int):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def _address_space_limited(limit: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


@pytest.mark.workflow
def test_a_memory_limit_below_the_jobs_need_is_refused_before_any_job(tmp_path):
    """Issue 58: under `ulimit -v 800000` a fit job spun in OpenBLAS's start-up and run.sh did
    not return in 11 minutes. Both run.sh and a plain Snakemake run refuse before any job, in
    one line naming the limit and the need (the start-up measured by a probe under the same
    limit: the real OpenBLAS start-up); a dry run still plans."""
    config = tmp_path / "c.yaml"
    config.write_text((CONFIGS / "tiny.yaml").read_text())
    limit = 800_000 * 1024
    venv = dict(ENV, MODELVAR_VENV=str(Path(PYTHON).parents[1]))
    runs = {
        "run.sh": ["bash", str(REPO / "scripts/run.sh"), "--configfile", "c.yaml",
                   "--cores", "1"],
        "snakemake": [PYTHON, "-m", "snakemake", "-s", str(REPO / "Snakefile"),
                      "--configfile", "c.yaml", "--cores", "1"]}
    for name, command in runs.items():
        proc = subprocess.run(command, cwd=tmp_path, env=venv, capture_output=True, text=True,
                              timeout=300, preexec_fn=_address_space_limited(limit))
        lines = [ln for ln in proc.stderr.splitlines() if "address-space limit" in ln]
        assert proc.returncode != 0 and len(lines) == 1, (name, proc.stderr[-3000:])
        assert lines[0].startswith("modelvar: the address-space limit (ulimit -v 800000 kB, "
                                   "781 MiB) is below what "), lines[0]
        assert "MiB that a job's start-up reserves (importing numpy, scipy.linalg" in lines[0]
        assert "Lift it (ulimit -v unlimited), set it to at least " in lines[0]
        assert not (tmp_path / "results/predictions").exists(), name
        assert "can't start new thread" not in proc.stderr
    dry = subprocess.run(runs["snakemake"] + ["-n"], cwd=tmp_path, env=venv,
                         capture_output=True, text=True, timeout=300,
                         preexec_fn=_address_space_limited(limit))
    assert dry.returncode == 0 and "address-space" not in dry.stderr, dry.stderr[-2000:]


def test_a_job_start_up_that_hangs_under_the_limit_is_killed_and_named():
    """Under 150 MB the probe's numpy import spins in OpenBLAS's start-up (the issue's hang,
    for real): it is killed from outside at the probe's time limit, and that is the answer."""
    code = ("from modelvar.running.address_space import startup_bytes, BASE_MODULES\n"
            "print(startup_bytes(list(BASE_MODULES), seconds=5))")
    proc = subprocess.run([PYTHON, "-c", code], env=ENV, capture_output=True, text=True,
                          timeout=120, preexec_fn=_address_space_limited(150 * 2**20))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() in ("(None, 'did not finish within 5 s (killed)')",
                                   "(None, 'failed: MemoryError')"), proc.stdout


def test_a_report_that_cannot_be_written_leaves_the_earlier_one_and_says_why(tmp_path,
                                                                           monkeypatch, capsys):
    from modelvar.cli import main

    staged, dest = tmp_path / "staging.html", tmp_path / "results" / "report.html"
    staged.write_bytes(b"<html>" + b"x" * 400_000 + b"</html>")
    dest.parent.mkdir()
    dest.write_text("the earlier report")
    proc = subprocess.run([PYTHON, "-m", "modelvar", "place-report", str(staged), str(dest)],
                          env=ENV, capture_output=True, text=True,
                          preexec_fn=_file_size_limited(100_000))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"modelvar place-report: error: cannot write {dest}: the file is larger than the file "
        "system or `ulimit -f` allows; nothing was written there")
    assert dest.read_text() == "the earlier report"
    assert sorted(p.name for p in dest.parent.iterdir()) == ["report.html"]  # no temporary
    import shutil

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(shutil, "copyfile", read_only)
    assert main(["place-report", str(staged), str(dest)]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "report.html: the file system is read-only; nothing was written there")
    monkeypatch.undo()
    assert main(["place-report", str(staged), str(dest)]) == 0
    assert dest.read_bytes().startswith(b"<html>x") and not staged.exists()


def test_place_report_refuses_what_would_lose_the_report(tmp_path, monkeypatch, capsys):
    """Issue 58: the report onto itself (it was deleted, exit 0), a folder, a folder that does
    not exist (it was created, at the file system's root for '/x/r.html') are refused before
    anything is written or removed; the report stays."""
    from modelvar.cli import main

    monkeypatch.chdir(tmp_path)
    report = tmp_path / "r.html"
    report.write_bytes(b"<html>" + b"x" * 1000 + b"</html>")
    before = report.read_bytes()
    cases = {
        "./r.html": "r.html is r.html itself; nothing was written or removed",
        str(tmp_path): f"{tmp_path} is a folder; give the file's path in it, e.g. "
                       f"{tmp_path / 'r.html'}",
        "nowhere/deeper/r.html": "nowhere/deeper/r.html: its folder nowhere/deeper does not "
                                 "exist; nothing was written or removed",
    }
    for dest, message in cases.items():
        assert main(["place-report", "r.html", dest]) == 2, dest
        assert capsys.readouterr().err.strip() == f"modelvar place-report: error: {message}"
        assert report.read_bytes() == before
    assert not (tmp_path / "nowhere").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]  # no temporary left
    assert main(["place-report", "gone.html", "x.html"]) == 2
    assert capsys.readouterr().err.strip() == \
        "modelvar place-report: error: gone.html: no such file"
    (tmp_path / "out").mkdir()
    assert main(["place-report", "r.html", "out/report.html"]) == 0
    assert (tmp_path / "out/report.html").read_bytes() == before and not report.exists()


def test_a_figure_that_cannot_be_written_is_one_error_and_no_partial_file(tmp_path):
    """The PNG is drawn in memory and written atomically: a write that fails (zlib.error
    before) is a WriteFailed naming the file, and nothing is left at its path."""
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path

        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np

        from modelvar.plots.common import save_figure
        from modelvar.table_files import WriteFailed

        fig, ax = plt.subplots(figsize=(7, 5))
        ax.imshow(np.random.default_rng(0).random((400, 400)))
        try:
            save_figure(fig, [Path({str(tmp_path / "noise.png")!r})])
        except WriteFailed as exc:
            print(exc, file=sys.stderr)
            sys.exit(3)
        """)
    proc = subprocess.run([PYTHON, "-c", script], env=ENV, capture_output=True, text=True,
                          preexec_fn=_file_size_limited(50_000))
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.strip() == f"cannot write {tmp_path / 'noise.png'}: the file is larger " \
        "than the file system or `ulimit -f` allows; nothing was written there"
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ SLURM without a controller
def _dry_run_with_tools(tmp_path: Path, fake: Path) -> subprocess.CompletedProcess:
    """run.sh -n of the tiny study with the stand-in tools in ``fake`` first on the PATH."""
    for tool in fake.iterdir():
        tool.chmod(0o755)
    config = yaml.safe_load((CONFIGS / "tiny.yaml").read_text())
    (tmp_path / "my.yaml").write_text(yaml.safe_dump(config))
    env = dict(os.environ, MODELVAR_VENV=str(Path(PYTHON).parents[1]),
               PATH=f"{fake}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(["bash", str(REPO / "scripts" / "run.sh"), "--configfile", "my.yaml",
                           "-n"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)


def test_slurm_tools_without_a_controller_are_said_and_do_not_stall_a_dry_run(tmp_path):
    """Client tools whose controller never answers: run.sh asks once (2 s), says why, and
    hides scontrol from Snakemake's SLURM plugin, which asked at every start (10 s each)."""
    fake = tmp_path / "slurm-bin"
    fake.mkdir()
    calls = tmp_path / "scontrol-calls"
    (fake / "scontrol").write_text(f"#!/bin/sh\necho \"$*\" >> {calls}\nexec sleep 30\n")
    for tool in ("sinfo", "sacct", "squeue", "sbatch"):
        (fake / tool).write_text("#!/bin/sh\nexec sleep 30\n")
    proc = _dry_run_with_tools(tmp_path, fake)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "modelvar: SLURM tools found but no controller answers (scontrol show config: no " \
        "answer in 2 s)" in proc.stderr
    assert calls.read_text().splitlines() == ["show config"]  # run.sh's own question only


@pytest.mark.parametrize("answer", ["exit 1", "echo 'MinJobAge = 300 sec'"])
def test_slurm_tools_that_answer_are_left_alone(tmp_path, answer):
    fake = tmp_path / "slurm-bin"
    fake.mkdir()
    (fake / "scontrol").write_text(f"#!/bin/sh\n{answer}\n")
    for tool in ("sinfo", "squeue"):
        (fake / tool).write_text("#!/bin/sh\nexit 0\n")
    proc = _dry_run_with_tools(tmp_path, fake)
    assert proc.returncode == 0 and "no controller answers" not in proc.stderr
