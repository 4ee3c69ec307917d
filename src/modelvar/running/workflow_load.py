"""What every load of the workflow does before Snakemake sees a rule (``rules/common.smk`` calls
:func:`load_study` once): the config and its datasets checked, the plan made, and the results
folder readied, each only where the command line calls for it.

- **Every problem at once**, before any job (dry runs too): the config files (duplicate keys,
  aliases, templating refused: :func:`~modelvar.running.workflow_config.check_config_file`),
  the schema and the datasets (:func:`~modelvar.planning.config_check.check_config`, which fills
  in the schema's defaults, so that what follows reads ``config[...]``), and the design's files.
- **The plan** (:func:`~modelvar.planning.plan.plan_study`) makes the jobs, the same at every
  load of one run (SLURM job steps too): it reads only the config, the datasets' shapes and the
  cached probes. Probe fits run only where the command line executes jobs: a lint, a dry run or a
  listing fits nothing and says what it planned without (issue 69).
- **What a load writes**: nothing for a command that only reads the rules (a lint, a listing of
  rules: :func:`~modelvar.running.workflow_config.parses_only`); otherwise a new results folder
  is made and marked, and the folder's damaged jobs and strays are dealt with
  (:func:`~modelvar.running.job_recipes.check_results_at_load`); a run that executes jobs
  records the plan's batches of repeats (:mod:`~modelvar.planning.repeat_batches`), so that
  later plans keep them.
- **SLURM job arrays**: on the SLURM executor, a line per rule whose jobs go as arrays and the
  ``sbatch`` calls they take, and a stop where an arrayed rule's jobs ask for different limits
  (:mod:`~modelvar.running.slurm_arrays`).
- **The address-space limit** (``ulimit -v``) of a run that executes is checked before any
  probe fit, on a plan made without them (the jobs' memory comes from the data's shape), and
  again on the plan it runs (:mod:`~modelvar.running.address_space`).

Problems end the load with one line, ``modelvar: …``; warnings are printed as
``modelvar: warning: …``, by the main process only.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelvar.data.errors import DatasetError
from modelvar.planning import outputs, repeat_batches
from modelvar.planning.config_check import CheckedStudy, ConfigProblems, check_config, read_schema
from modelvar.planning.plan import PlanError, StudyPlan, plan_study
from modelvar.running.address_space import (
    address_space_check,
    address_space_limit,
    address_space_problem,
)
from modelvar.running.job_recipes import check_results_at_load
from modelvar.running.run_lock import mark_if_new
from modelvar.running.slurm_arrays import array_lines, planned_limits, uneven_problems
from modelvar.running.workflow_config import (
    ConfigError,
    check_config_file,
    executes_jobs,
    parses_only,
    slurm_arrays,
)
from modelvar.study.rounds import design_problem


@dataclass(frozen=True)
class LoadedStudy:
    """The checked study and its plan, and what the command line calls for: ``executes`` (it
    runs jobs), ``writes`` (the load may write into the results folder)."""

    study: CheckedStudy
    plan: StudyPlan
    executes: bool
    writes: bool


def load_study(config: dict, *, configfiles: list, schema_path: str | Path,
               argv: list[str], main_process: bool, say: Any = None) -> LoadedStudy:
    """Check ``config`` (filled in place with the schema's defaults), plan it and ready its
    results folder for the Snakemake command line ``argv`` (module docstring); exit with one
    line on a problem. ``configfiles``: the files the config was read from; ``main_process``:
    Snakemake's main process (not a SLURM job step), the one that decides, warns and writes."""
    say = say or (lambda line: print(f"modelvar: {line}", file=sys.stderr))
    # Snakemake decides a dry run after the load (workflow.dryrun is not yet set): its command
    # line says
    executes = main_process and executes_jobs(argv)
    writes = main_process and not parses_only(argv)
    try:
        for path in configfiles:
            check_config_file(path)
        study = check_config(config, read_schema(schema_path))
        if writes:  # a new folder is made and marked; a user's existing one used as it is
            mark_if_new(config["results_dir"])
        mismatch = design_problem(config)
        if mismatch:
            raise ConfigError(mismatch)
        if executes and address_space_limit() is not None:
            problem = address_space_problem(config, plan_study(config, study.schemas,
                                                               probes=False))
            if problem:
                sys.exit(f"modelvar: {problem}")
        plan = plan_study(config, study.schemas, probes=executes)
    except (ConfigProblems, ConfigError, PlanError, DatasetError) as exc:
        sys.exit(f"modelvar: {exc}")
    if main_process:
        problem, limit_warnings = address_space_check(config, plan) if executes else (None, [])
        if problem:
            sys.exit(f"modelvar: {problem}")
        results = config["results_dir"]
        for warning in (study.warnings + plan.warnings() + plan.unprobed_warnings()
                        + limit_warnings + outputs.design_change_lines(results, config, plan)):
            say(f"warning: {warning}")
        arrays = slurm_arrays(argv)
        if arrays is not None:
            uneven = uneven_problems(arrays[0], planned_limits(config, plan))
            if uneven:
                sys.exit("modelvar: " + "\nmodelvar: ".join(uneven))
            for line in array_lines(*arrays, outputs.job_counts(results, config, plan)):
                say(line)
        if executes:  # the batches of repeats are decided once (planning.repeat_batches)
            repeat_batches.record(results, plan.batches())
        if writes:
            for line in check_results_at_load(
                    results, dry_run=not executes,
                    planned=outputs.planned_manifests(results, config, plan)):
                say(line)
    return LoadedStudy(study, plan, executes, writes)
