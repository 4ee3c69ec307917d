"""One run at a time per results folder, and safe recovery after a killed run.

Snakemake locks the files a run will write, but keeps the lock in the *working directory's*
``.snakemake/`` folder. So two runs from different working directories on the same absolute
``results_dir`` both run the same jobs, and a run killed with ``kill -9`` leaves its lock behind:
the next run stops until someone runs ``--unlock``. Two advisory locks (``fcntl.flock``, released
by the kernel when a process ends, even after ``kill -9``) close both gaps:

* **results lock** — a run that starts executing jobs (the workflow's ``onstart``) holds an
  exclusive lock on ``RESULTS/.modelvar/run.lock`` until it ends. A second run on the same
  results folder, from any working directory, is refused with a message naming the running one
  (pid, host, working directory, start time). Dry runs take no lock.
* **activity lock** — every Snakemake process that loads the workflow (the main process and its
  job steps) holds a *shared* lock on ``WORKDIR/.snakemake/modelvar-active.lock`` while it
  lives. :func:`unlock_if_stale` (``scripts/run.sh`` calls it before Snakemake) takes that lock
  exclusively without waiting: if it gets it, no process of this workflow is alive in the
  working directory, so Snakemake locks found there are stale, and it removes them with
  ``snakemake --unlock`` (the official way), holding the lock meanwhile so that no run can start
  in between. If another run is alive, it leaves the locks alone.

Advisory locks need a file system that supports ``flock`` (local disks do; on NFS, Linux maps it
to POSIX locks, which NFSv4 supports).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from modelvar.table_files import STATE_DIR

ACTIVITY_LOCK = "modelvar-active.lock"
RESULTS_LOCK = "run.lock"
#: set for the ``snakemake --unlock`` that :func:`unlock_if_stale` starts while it holds the
#: activity lock exclusively (that process must not wait for it)
UNLOCKING_ENV = "MODELVAR_UNLOCKING"

_held: list[IO] = []  # open lock files: a lock lives as long as its file stays open


class RunLockError(RuntimeError):
    """Another run is using the same results folder."""


def _open(path: Path) -> IO:
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "a+")


def hold_activity_lock(workdir: str | Path) -> None:
    """Hold a shared activity lock on ``WORKDIR/.snakemake`` for this process's lifetime."""
    if os.environ.get(UNLOCKING_ENV):
        return
    fh = _open(Path(workdir) / ".snakemake" / ACTIVITY_LOCK)
    fcntl.flock(fh, fcntl.LOCK_SH)
    _held.append(fh)


def hold_results_lock(results_dir: str | Path, *, working_dir: str | Path) -> None:
    """Hold the exclusive results lock for this process's lifetime, or raise
    :class:`RunLockError` naming the run that holds it."""
    path = Path(results_dir) / STATE_DIR / RESULTS_LOCK
    fh = _open(path)
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.seek(0)
        try:
            owner = json.loads(fh.read() or "{}")
        except json.JSONDecodeError:
            owner = {}
        fh.close()
        raise RunLockError(
            f"results folder {Path(results_dir).resolve()} is in use by another modelvar run "
            f"(pid {owner.get('pid', '?')} on {owner.get('host', '?')}, working directory "
            f"{owner.get('workdir', '?')}, started {owner.get('started', '?')}). Two runs on "
            "one results folder would write the same files: wait for that run to finish, or "
            "give this study another results_dir."
        ) from None
    fh.seek(0)
    fh.truncate()
    fh.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                         "workdir": str(Path(working_dir).resolve()),
                         "started": time.strftime("%Y-%m-%d %H:%M:%S")}))
    fh.flush()
    _held.append(fh)


def results_in_use(results_dir: str | Path) -> bool:
    """Whether a run holds ``results_dir``'s results lock now (taken and released at once,
    without waiting, where it is free)."""
    path = Path(results_dir) / STATE_DIR / RESULTS_LOCK
    if not path.is_file():
        return False
    with open(path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
    return False


def snakemake_locks(workdir: str | Path) -> list[Path]:
    locks = Path(workdir) / ".snakemake" / "locks"
    return sorted(p for p in locks.iterdir() if p.is_file()) if locks.is_dir() else []


def unlock_if_stale(workdir: str | Path, snakemake_options: list[str]) -> str | None:
    """Remove Snakemake locks left in ``workdir`` by a run that no longer exists.

    ``snakemake_options`` select the workflow and config (as for the run itself). Returns a
    message for the user when locks were removed, ``None`` when there were none or another run
    is alive (then Snakemake's own check applies)."""
    if not snakemake_locks(workdir):
        return None
    fh = _open(Path(workdir) / ".snakemake" / ACTIVITY_LOCK)
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None  # a run of this workflow is alive here: its locks are real
        env = dict(os.environ, **{UNLOCKING_ENV: "1"})
        proc = subprocess.run(
            [sys.executable, "-m", "snakemake", *snakemake_options, "--unlock"],
            capture_output=True, text=True, env=env, check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(
                f"snakemake --unlock failed in {workdir}:\n{proc.stdout}\n{proc.stderr}")
    finally:
        fh.close()
    return (f"modelvar: an earlier run in {Path(workdir).resolve()} was interrupted and left "
            "Snakemake's lock behind; no other run is active there, so it was removed "
            "(snakemake --unlock).")


#: in ``RESULTS/.modelvar``: written by the load that created the results folder
MADE_HERE = "made-by-modelvar.json"


def mark_if_new(results_dir: str | Path) -> bool:
    """Create ``results_dir`` where it does not exist yet, and record in it that modelvar
    made it (:data:`MADE_HERE`); True where it did. A folder that existed before — a user's,
    with files of theirs — is used as it is (:func:`ignore_in_git` writes nothing into it)."""
    root = Path(results_dir)
    if root.exists():
        return False
    (root / STATE_DIR).mkdir(parents=True, exist_ok=True)
    (root / STATE_DIR / MADE_HERE).write_text(json.dumps(
        {"made": time.strftime("%Y-%m-%d %H:%M:%S"), "host": socket.gethostname(),
         "workdir": str(Path.cwd())}) + "\n")
    return True


def ignore_in_git(results_dir: str | Path) -> bool:
    """``RESULTS/.gitignore`` holding ``*``, as a virtual environment does, in a results folder
    that modelvar made (:func:`mark_if_new`): a results folder made inside a git checkout (any
    ``results_dir``, not only the default ``results/``) is never committed by accident. A folder
    that existed before modelvar used it, and an existing ``.gitignore``, are left as they
    are. True where it wrote the file."""
    path = Path(results_dir) / ".gitignore"
    if path.exists() or not (Path(results_dir) / STATE_DIR / MADE_HERE).is_file():
        return False
    path.write_text("# written by modelvar: a results folder is not for git\n*\n")
    return True


def start_run(results_dir: str | Path, argv: list[str], snakefile: str | Path,
              configfiles: list) -> None:
    """What the workflow does when jobs start (its onstart; not for dry runs): hold the results
    lock, keep a folder modelvar made out of git, remove modelvar's own temporaries of
    interrupted writes, and record the invocation for ``modelvar verify``'s regenerate
    commands."""
    from modelvar.running.workflow_config import record_invocation
    from modelvar.table_files import remove_stray_temporaries

    hold_results_lock(results_dir, working_dir=Path.cwd())
    ignore_in_git(results_dir)
    stray = remove_stray_temporaries(results_dir)
    if stray:
        print(f"modelvar: removed {len(stray)} temporary file(s) of interrupted writes, e.g. "
              f"{stray[0]}", file=sys.stderr)
    record_invocation(results_dir, argv, working_dir=Path.cwd(), snakefile=snakefile,
                      configfiles=configfiles)
