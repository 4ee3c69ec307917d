"""The SLURM executor's job arrays, as a run of the plan will use them (issue 69): which rules'
jobs go as arrays (``--slurm-array-jobs``) and in how many ``sbatch`` calls, said at the load, so
that a dry run shows its submissions (Snakemake's dry run never reaches the executor).

**Only rules whose jobs ask for the same limits.** The executor submits a rule's ready jobs as
one array with the first job's time and memory limits for every task (snakemake-executor-
plugin-slurm 2.8), while the plan sizes each fit and metrics job (and a probe job's measurement
resizes an OpenML dataset's fit jobs). An arrayed rule whose jobs' limits differ would have its
longer jobs killed, so the load stops on it (:func:`uneven_problems`), and ``profiles/slurm``
arrays no rule; a study whose config's ``resources`` raise every job of a rule to one limit may
array it."""

from __future__ import annotations

import math
from collections.abc import Mapping

#: the executor's default (``--slurm-array-limit``) and SLURM's own (MaxArraySize 1001)
DEFAULT_ARRAY_LIMIT = 1000


def arrayed_rules(setting: str | None) -> set[str]:
    """The rules of a ``--slurm-array-jobs`` value (``"fit, pairwise_metrics"``, ``;`` also
    separates; ``all``: every rule), as the executor reads it."""
    if not setting:
        return set()
    return {name.strip() for name in setting.replace(";", ",").split(",") if name.strip()}


def array_lines(setting: str | None, limit: int | None, jobs: Mapping[str, int]) -> list[str]:
    """One line per arrayed rule of ``jobs`` (rule → the plan's job count, in the rules'
    order): its jobs and the
    ``sbatch`` calls that submit them, ``limit`` tasks at most each (a rule with one job is
    submitted alone, as the executor does). Nothing without arrays."""
    rules = arrayed_rules(setting)
    limit = limit if isinstance(limit, int) and limit > 1 else DEFAULT_ARRAY_LIMIT
    out = []
    for rule, count in jobs.items():
        if rule == "all" or count == 0 or not (rule in rules or "all" in rules):
            continue
        if count == 1:
            out.append(f"SLURM: {rule}: 1 job, submitted on its own (an array needs two)")
        else:
            calls = math.ceil(count / limit)
            out.append(f"SLURM: {rule}: {count:,} jobs as job arrays, {calls:,} sbatch "
                       f"call(s) of at most {limit:,} tasks (--slurm-array-limit)")
    return out


def planned_limits(config: dict, plan) -> dict[str, set]:
    """Per plan-sized rule, the distinct (runtime, mem_mb) its jobs ask for on their first
    attempt; a fit job whose limits follow its probe job counts as limits of its own."""
    from modelvar.models.registry import fit_rule
    from modelvar.planning import outputs
    from modelvar.planning.plan import job_resources

    grouped = config["grouped"]["by"]
    out: dict[str, set] = {}

    def add(rule: str, job, probed: tuple | None = None) -> None:
        found = job_resources(config, outputs.rule(rule).group, 1, job)
        out.setdefault(rule, set()).add(probed or (found["runtime"], found["mem_mb"]))

    for ds, dataset_plan in plan.datasets.items():
        for clf, clf_plan in dataset_plan.classifiers.items():
            rule = fit_rule(clf, config["classifier_settings"])
            probed = (ds, clf) in plan.probe_jobs
            for job in clf_plan.fit_jobs:
                add(rule, job, ("after its probe", ds, clf, job.id) if probed else None)
            for job in clf_plan.metrics_jobs:
                add("pairwise_metrics", job)
                if ds in grouped:
                    add("grouped_metrics", job)
    return out


def uneven_problems(setting: str | None, limits: Mapping[str, set]) -> list[str]:
    """One problem per arrayed rule of ``setting`` whose jobs ask for different limits
    (``limits``: :func:`planned_limits`), naming the range and the fix (module docstring)."""
    rules = arrayed_rules(setting)
    out = []
    for rule, found in limits.items():
        if len(found) < 2 or not (rule in rules or "all" in rules):
            continue
        sized = [f for f in found if isinstance(f[0], int)]
        spread = (f"runtime {min(r for r, _ in sized):,} to {max(r for r, _ in sized):,} min, "
                  f"mem_mb {min(m for _, m in sized):,} to {max(m for _, m in sized):,}"
                  if sized else "")
        probed = len(found) - len(sized)
        what = "; ".join(filter(None, [spread, f"{probed:,} set by probe jobs" if probed
                                       else ""]))
        out.append(f"--slurm-array-jobs names {rule}, whose jobs ask for different limits "
                   f"({what}): the SLURM executor gives every task of an array its first "
                   f"job's limits, so the longer jobs would be killed; leave {rule} out of "
                   "--slurm-array-jobs (profiles/slurm arrays no rule), or raise its resource "
                   "group's runtime and mem_mb in the config's `resources` to one limit for "
                   "all its jobs")
    return out
