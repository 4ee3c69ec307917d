"""What Snakemake's own log of a run says about its jobs: the ones it restarted.

A job that fails while it has ``retries`` left (the SLURM profile's ``retries: 2``; a job killed
by the scheduler for time or memory fails) is logged by Snakemake as ``Trying to restart job
N.`` and runs again on its next attempt, with twice the time limit and memory
(:func:`modelvar.planning.plan.on_attempt`). The run then succeeds, and nothing but this log
says that its jobs were priced too low. Snakemake logs each job it starts as a block::

    rule fit:
        input: ...
        jobid: 7
        wildcards: dataset=vehicle, classifier=lr-sgd, job=dnone_cnone_hnone
        resources: ...

(``localrule`` for a rule run on the submitting machine), which names the job restarted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_RULE = re.compile(r"^(?:local)?rule (\S+):\s*$")
_FIELD = re.compile(r"^\s+(jobid|wildcards): (.*)$")
_RESTART = re.compile(r"^Trying to restart job (\d+)\.\s*$")


@dataclass(frozen=True)
class RestartedJob:
    rule: str
    wildcards: str
    #: how many times Snakemake restarted it (its attempts: restarts + 1)
    restarts: int

    def __str__(self) -> str:
        values = ", ".join(part.split("=", 1)[-1] for part in self.wildcards.split(", ") if part)
        return f"{self.rule} {values}".strip() + f" ({self.restarts + 1} attempts)"


def restarted_jobs(lines: Iterable[str]) -> list[RestartedJob]:
    """The jobs the log's lines show restarted, in the order of their first restart."""
    jobs: dict[str, tuple[str, str]] = {}
    restarts: dict[str, int] = {}
    rule, jobid, wildcards = None, None, ""
    for line in lines:
        line = line.rstrip("\n")
        if match := _RULE.match(line):
            rule, jobid, wildcards = match.group(1), None, ""
        elif rule is not None and (match := _FIELD.match(line)):
            if match.group(1) == "jobid":
                jobid = match.group(2).strip()
            else:
                wildcards = match.group(2).strip()
            if jobid is not None:
                jobs[jobid] = (rule, wildcards)
        elif match := _RESTART.match(line):
            restarts[match.group(1)] = restarts.get(match.group(1), 0) + 1
        elif not line.startswith((" ", "\t")):
            rule = None
    return [RestartedJob(*jobs.get(jobid, ("job " + jobid, "")), count)
            for jobid, count in restarts.items()]


def restarts_line(log_files: Iterable[str | Path]) -> str | None:
    """One line for the run summary naming the restarted jobs of the logs (None: none)."""
    found: list[RestartedJob] = []
    for path in log_files:
        path = Path(path)
        if path.is_file():
            with path.open(errors="replace") as fh:
                found += restarted_jobs(fh)
    if not found:
        return None
    named = "; ".join(str(job) for job in found[:5])
    more = f"; and {len(found) - 5} more" if len(found) > 5 else ""
    return (f"{len(found)} job(s) needed more than one attempt (the scheduler or the job "
            f"failed, and the retry asked for twice the time and memory): {named}{more}. "
            "Raise jobs.runtime_margin_minutes or the rule's resources.* (mem_mb, runtime), or "
            "calibrate the cost model on this run: modelvar plan --calibrate")
