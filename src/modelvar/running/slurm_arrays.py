"""The SLURM executor's job arrays, as a run of the plan will use them (issue 69): which rules'
jobs go as arrays (``--slurm-array-jobs``, set for the fit and metrics rules by
``profiles/slurm``) and in how many ``sbatch`` calls, said at the load, so that a dry run of the
full study shows its submissions (Snakemake's dry run never reaches the executor)."""

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
