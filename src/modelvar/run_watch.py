"""No job outlives its run: a workflow job watches the processes that started it and stops when
one of them ends.

``scripts/run.sh`` and the workflow's main Snakemake process each add themselves to the
environment variable :data:`WATCH_VARIABLE` (``host:pid:start-time`` entries, space-separated),
which every job inherits. A job (``modelvar <job command>``) watches each entry of its own host
from a helper thread; when one ends (Snakemake died of a memory limit or a ``kill -9``, run.sh
was killed), the job says so in its log and stops as Ctrl-C would stop it (its temporary files
are removed), or at once if it does not stop within :data:`GRACE_SECONDS`.

The start time (``/proc/PID/stat``'s field 22) tells a process from a later one that reuses its
pid; where there is no ``/proc`` (macOS), a pid alone is watched. Entries of other hosts (a
SLURM job on a compute node inherits the submitting host's entries) are ignored: there, the job
step's own Snakemake adds itself.
"""

from __future__ import annotations

import _thread
import os
import select
import signal
import socket
import sys
import threading
import time

WATCH_VARIABLE = "MODELVAR_WATCH"
#: how long a job may take to stop after being interrupted before it is ended at once
GRACE_SECONDS = 10.0
#: how often a process is checked where the system cannot wait for its end (no pidfd)
POLL_SECONDS = 1.0
#: the watcher thread's stack: small, so that it starts under a tight `ulimit -v`
STACK_BYTES = 256 * 1024


def start_time(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot), or None without ``/proc``
    or when it has ended."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # fields after the command name: 3, 4, …, 22


def entry(pid: int | None = None) -> str:
    """This host's entry for process ``pid`` (default: this process)."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{start_time(pid) or '-'}"


def add_to_environment(pid: int | None = None, environ=os.environ) -> str:
    """Add process ``pid`` to the watched processes that child processes inherit."""
    entries = environ.get(WATCH_VARIABLE, "").split()
    mine = entry(pid)
    if mine not in entries:
        entries.append(mine)
    environ[WATCH_VARIABLE] = " ".join(entries)
    return environ[WATCH_VARIABLE]


def watched(environ=os.environ) -> list[tuple[int, str | None]]:
    """(pid, start time) of each entry of this host."""
    host, out = socket.gethostname(), []
    for item in environ.get(WATCH_VARIABLE, "").split():
        parts = item.rsplit(":", 2)
        if len(parts) != 3 or parts[0] != host or not parts[1].isdigit():
            continue
        out.append((int(parts[1]), None if parts[2] == "-" else parts[2]))
    return out


def alive(pid: int, started: str | None) -> bool:
    if started is not None:
        return start_time(pid) == started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _wait_for_end(pid: int, started: str | None) -> None:
    """Return when process ``pid`` has ended."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd (macOS, old kernels) or already gone
        fd = None
    if fd is not None:
        try:
            if alive(pid, started):  # the pid is the watched process, not a later one
                select.select([fd], [], [])
        finally:
            os.close(fd)
        return
    while alive(pid, started):
        time.sleep(POLL_SECONDS)


def _stop(name: str, pid: int) -> None:
    print(f"modelvar {name}: the process that started this job (pid {pid}: Snakemake or "
          "run.sh) has ended; stopping this job", file=sys.stderr, flush=True)
    _thread.interrupt_main()
    time.sleep(GRACE_SECONDS)
    os._exit(130)  # still running: stuck in native code that does not check for signals


def watch(name: str, environ=os.environ) -> list[threading.Thread]:
    """Watch this host's entries of the environment; ``name``: the job's command, for the
    message. Returns the watcher threads (none when nothing is watched).

    A watched job stops as Ctrl-C stops it wherever it was started: a process that starts with
    SIGINT ignored (any process a non-interactive shell starts in the background, e.g. ``nohup
    bash scripts/run.sh &``) would otherwise not see the watcher's interrupt and be ended
    without its cleanup, so Python's handler is put back (from the main thread)."""
    threads = []
    if watched(environ) and threading.current_thread() is threading.main_thread() \
            and signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL):
        signal.signal(signal.SIGINT, signal.default_int_handler)
    previous = threading.stack_size()
    try:
        threading.stack_size(STACK_BYTES)
        for pid, started in watched(environ):
            if pid == os.getpid():
                continue

            def run(pid=pid, started=started):
                _wait_for_end(pid, started)
                _stop(name, pid)

            thread = threading.Thread(target=run, name=f"watch-{pid}", daemon=True)
            try:
                thread.start()
            except RuntimeError:  # cannot start a thread: the job runs unwatched
                continue
            threads.append(thread)
    finally:
        threading.stack_size(previous)
    return threads
