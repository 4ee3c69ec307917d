"""The functions the rules hand to Snakemake (``rules/common.smk``), made here: the parameters
Snakemake reads of every input, params and resources function, a rule's threads, resources,
code version and log keyed by the rule's name (:data:`modelvar.planning.outputs.RULES` holds its
resource group and command), and the input function of a job's recipe."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path

from modelvar.planning import outputs
from modelvar.planning.plan import job_resources
from modelvar.planning.probe_jobs import ProbeResult, probed_job
from modelvar.running.job_recipes import inputs_digest, record_recipe, source_digest

try:  # the attribute Snakemake reads a function's parameters from (with_known_signature)
    from snakemake.common import FUNC_OVERWRITE_PARAMS_ATTR
except ImportError:  # a Snakemake without it inspects every function, as before
    FUNC_OVERWRITE_PARAMS_ATTR = None


def with_known_signature(function: Callable) -> Callable:
    """Store the function's parameters on it, where Snakemake looks for them first
    (``snakemake.common.get_function_params``, which reads the attribute named by
    ``FUNC_OVERWRITE_PARAMS_ATTR`` before it calls ``inspect.signature``), and its signature
    (PEP 362's ``__signature__``, for any other caller): Snakemake asks for the parameters of
    every input, params and resources function of every job
    (docs/measurements/design-choices.md)."""
    signature = inspect.signature(function)
    function.__signature__ = signature
    if FUNC_OVERWRITE_PARAMS_ATTR:
        setattr(function, FUNC_OVERWRITE_PARAMS_ATTR, signature.parameters)
    return function


@functools.cache
def takes_only_wildcards(function: Callable) -> bool:
    """Whether a params function reads only the wildcards (not input or output paths)."""
    return list(inspect.signature(function).parameters) == ["wildcards"]


def threads(config: dict, rule: str) -> int:
    """A rule's threads: its resource group's (:func:`modelvar.planning.outputs.resources`)."""
    return outputs.resources(config, outputs.rule(rule).group)["threads"]


def resources(config: dict, rule: str, job_of: Callable | None = None, **extra) -> dict:
    """A rule's ``resources``, plus ``extra`` (e.g. gpu=1): ``mem_mb`` and ``runtime`` of its
    group, for a plan-sized job from its FitJob or MetricsJob (``job_of(wildcards)``), doubled
    per retry (:func:`modelvar.planning.plan.job_resources`). A job with a ``probe`` input (a
    fit job of a dataset that arrives in a job) takes its estimate, bound and memory from that
    probe's result once it exists (:func:`modelvar.planning.probe_jobs.probed_job`: Snakemake
    computes a job's resources again when its inputs are there); before, the plan's."""
    group = outputs.rule(rule).group

    def job(wildcards, input):
        planned = job_of(wildcards) if job_of else None
        probe = getattr(input, "probe", None)
        if planned is None or not probe or not Path(probe).is_file():
            return planned
        return probed_job(planned, ProbeResult.read(probe))

    def amount(key):
        return with_known_signature(lambda wildcards, input, attempt: job_resources(
            config, group, attempt, job(wildcards, input))[key])

    return {"mem_mb": amount("mem_mb"), "runtime": amount("runtime"), **extra}


def log_path(results: str, rule: str) -> str:
    """A rule's log, ``RESULTS/logs/RULE/{w1}/{w2}….log`` by its manifest's wildcards
    (``RESULTS/logs/RULE.log`` for a rule of one job)."""
    keys = outputs.rule(rule).wildcards
    return f"{results}/logs/{rule}" + ("/" + "/".join(f"{{{k}}}" for k in keys) if keys
                                       else "") + ".log"


def recipe_input(workflow, config: dict, rule: str, inputs: Callable | None = None) -> Callable:
    """The input function of a job's recipe (:mod:`modelvar.running.job_recipes`): the rule's
    params that do not derive from input or output paths (those files are inputs themselves),
    a file dataset's content digest, and where a job reads a varying set of tables
    (``inputs``, its input function) their count and digest, recorded in the results folder
    so that a change reruns the job even where Snakemake's metadata is gone (fewer repeats on a
    copied folder). ``workflow``: Snakemake's, whose rule's params and dry-run state it reads
    when a job asks."""
    results = config["results_dir"]

    @with_known_signature
    def recipe(wildcards):
        def values():  # called only where the recipe is compared or written
            out = {}
            for name, value in workflow.get_rule(rule).params.items():
                if callable(value):
                    if not takes_only_wildcards(value):
                        continue
                    value = value(wildcards)
                out[name] = value
            if rule == "prepare_dataset":
                spec = config["datasets"][wildcards.dataset]
                if spec["source"] == "file":
                    out["source_sha256"] = source_digest(spec["path"], results)
            if inputs is not None:
                out["input_tables"] = inputs_digest(inputs(wildcards), results)
            return out

        return str(record_recipe(results, rule, dict(wildcards.items()), values,
                                 dry_run=workflow.dryrun))

    return recipe
