"""A shell's address-space limit (``ulimit -v``) against what the study's jobs need, checked
before any job starts.

Under ``ulimit -v`` every allocation counts against the limit, reserved or used: the Python
interpreter with numpy, scipy, scikit-learn, pandas and pyarrow reserves far more address space
than it touches (libraries, thread stacks, malloc arenas, BLAS buffers), and a job that hits the
limit inside a library's start-up does not always fail: OpenBLAS retries its failing ``mmap``
calls without end, in C code where no Python handler runs. So a run is refused before its first
job where the limit is below the largest job's

    need = start-up + mem_mb

with *start-up* the peak address space (``VmPeak``) of a probe process that imports what the
study's jobs import (torch where a classifier fits with it, xgboost where one does), with its BLAS
and OpenMP pools at one thread as every job's are (the workflow caps them at the job's threads),
measured under the same limit on this machine (``docs/measurements/address-space.md``), and
*mem_mb* what the job is expected to use: for a fit or metrics job the plan's estimate from the
data it holds (its ``mem_mb``); for a job of a fixed resource group (prepare, tune, findings,
figures, simulation), whose configured ``mem_mb`` is a scheduler's budget rather than an
estimate, :data:`EXPECTED_MB` (its measured peak with room, docs/measurements/address-space.md)
plus, for the findings job, the study's tables it reads. A run is refused only where a job's
expected need is above the limit; where only a budget is (``resources.aggregate.mem_mb``
4,000 MB under a 3 GB limit, while the findings job needs about 1 GB), it runs with a warning
saying which budget to lower. A probe that fails or does not finish within
:data:`PROBE_SECONDS` under the limit (killed from outside) is itself the answer: a job could
not start.

The check runs before any fit: a run that executes makes it first on a plan made without probe
fits (:func:`modelvar.planning.plan.plan_study`, ``probes=False``: the jobs' memory comes from the
data's shape, not from fit times), then again on the plan it runs.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Iterable

from modelvar.planning.data_probe import address_space_limit

#: what every job imports; the study's classifiers' libraries are added (:func:`startup_modules`)
BASE_MODULES = ("numpy", "scipy.linalg", "sklearn.linear_model", "pandas", "pyarrow.parquet")
#: a probe that has not imported its modules by then is killed: a job would hang the same way
PROBE_SECONDS = 60
#: the memory (MB) a job of a fixed resource group is expected to use beyond its start-up:
#: twice its largest peak resident memory measured on the shipped studies (the findings job
#: 255-273 MB, docs/measurements/address-space.md); the findings job adds the tables it reads
EXPECTED_MB = {"prepare": 600, "tune": 1000, "tune_gpu": 1000, "aggregate": 600, "plot": 600,
               "simulate": 600}
#: a table's bytes in memory per byte on disk (zstd-compressed parquet read into pandas)
TABLE_EXPANSION = 10
PROBE = ("import importlib, sys\n"
         "for name in sys.argv[1:]:\n"
         "    importlib.import_module(name)\n"
         "print(next(line.split()[1] for line in open('/proc/self/status')\n"
         "           if line.startswith('VmPeak:')))\n")


def startup_modules(classifiers: Iterable[str]) -> list[str]:
    """The modules a study's jobs import: :data:`BASE_MODULES` and the importable packages of
    each classifier's ``libraries`` (its spec's distributions: numba for the SGD ones, torch for
    the MLP, a user estimator's installed package; a class in a file of the user's has none)."""
    import importlib.metadata

    from modelvar.models.registry import spec

    by_distribution: dict[str, list[str]] = {}
    for module, distributions in importlib.metadata.packages_distributions().items():
        for distribution in distributions:
            by_distribution.setdefault(distribution.lower(), []).append(module)
    modules = list(BASE_MODULES)
    for name in classifiers:
        for distribution in spec(name).libraries:
            found = sorted(m for m in by_distribution.get(distribution.lower(), [])
                           if not m.startswith("_"))
            own = distribution.lower().replace("-", "_")
            for module in [own] if own in found else found:
                if module.split(".")[0] not in {m.split(".")[0] for m in modules}:
                    modules.append(module)
    return modules


@functools.lru_cache(maxsize=8)
def _startup_bytes(modules: tuple[str, ...], seconds: float) -> tuple[int | None, str]:
    return startup_bytes(list(modules), seconds)


def startup_bytes(modules: list[str], seconds: float = PROBE_SECONDS
                  ) -> tuple[int | None, str]:
    """(peak address space in bytes, "") of a probe that imports ``modules`` with one BLAS and
    OpenMP thread, under this process's limits; (None, why) where it failed or did not finish
    within ``seconds``."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    try:
        proc = subprocess.run([sys.executable, "-c", PROBE, *modules], capture_output=True,
                              text=True, env=env, timeout=seconds)
    except subprocess.TimeoutExpired:  # subprocess.run kills it (SIGKILL)
        return None, f"did not finish within {seconds:g} s (killed)"
    except OSError as exc:  # fork itself refused
        return None, f"could not start ({exc})"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        return None, f"failed: {last}"
    return int(proc.stdout.split()[-1]) * 1024, ""


def largest_job_mb(config: dict, plan, *, budget: bool = False) -> tuple[int, str]:
    """(mem_mb, what) of the job expected to use the most memory (module docstring): the
    plan's fit and metrics jobs, and the fixed resource groups of the study's other rules at
    :data:`EXPECTED_MB` (the findings job with the tables it reads); with ``budget``, what the
    jobs ask a scheduler for on their first attempt instead (a fixed group's configured
    ``mem_mb``)."""
    from modelvar.planning import outputs

    best = (0, "")
    counts = outputs.job_counts(config["results_dir"], config, plan)
    tables = sum(c.table_bytes for d in plan.datasets.values()
                 for c in d.classifiers.values())
    for rule_name in counts:
        group = outputs.rule(rule_name).group
        if group is None or group not in EXPECTED_MB:
            continue
        asked = outputs.resources(config, group)["mem_mb"]
        if budget:
            mem, what = asked, f"a {rule_name} job (resources.{group}.mem_mb {asked:,})"
        else:
            mem = EXPECTED_MB[group] + (int(tables * TABLE_EXPANSION / 2**20)
                                        if rule_name == "findings" else 0)
            mem = min(mem, asked) if asked else mem
            what = f"a {rule_name} job (expected to use about {mem:,} MB)"
        best = max(best, (mem, what))
    for ds, dataset_plan in plan.datasets.items():
        for clf, clf_plan in dataset_plan.classifiers.items():
            for kind, jobs in (("fit", clf_plan.fit_jobs), ("metrics", clf_plan.metrics_jobs)):
                for job in jobs:
                    if job.mem_mb > best[0]:
                        best = (job.mem_mb, f"the {kind} job {ds}/{clf}/{job.id} (the plan's "
                                f"mem_mb {job.mem_mb:,} for its data)")
    return best


def _mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:,.0f} MiB"


def address_space_check(config: dict, plan) -> tuple[str | None, list[str]]:
    """(problem, warnings): one line where this process's address-space limit is below what
    the study's largest job is expected to need (module docstring), naming both numbers; a
    warning where only a job's scheduler budget is above it. (None, []) where there is no
    limit, or it is enough. Linux only (the probe reads ``/proc``)."""
    limit = address_space_limit()
    if limit is None or not os.path.exists("/proc/self/status"):
        return None, []
    from modelvar.models.registry import classifier_names

    modules = startup_modules(classifier_names(config))
    shown = f"ulimit -v {limit // 1024} kB, {_mib(limit)}"
    startup, why = _startup_bytes(tuple(modules), PROBE_SECONDS)
    if startup is None:
        return (f"the address-space limit ({shown}) is below what a job's start-up needs: "
                f"importing {', '.join(modules)} under it {why}; lift it (ulimit -v unlimited) "
                "and size the jobs' memory with resources.*.mem_mb"), []
    mem_mb, which = largest_job_mb(config, plan)
    need = startup + mem_mb * 2**20
    if limit < need:
        return (f"the address-space limit ({shown}) is below what {which} needs: "
                f"{_mib(need)}, its memory and the {_mib(startup)} that a job's start-up "
                "reserves (importing " + ", ".join(modules) + "); under it jobs fail, or hang "
                f"in a library's start-up. Lift it (ulimit -v unlimited), set it to at least "
                f"{-(-need // 1024):,} kB, or give the jobs less memory (resources.*.mem_mb)"), []
    asked, which = largest_job_mb(config, plan, budget=True)
    if limit >= startup + asked * 2**20:
        return None, []
    room = max(0, (limit - startup) // 2**20)
    return None, [f"the address-space limit ({shown}) is below the scheduler budget of "
                  f"{which} with the {_mib(startup)} of a job's start-up, but every job is "
                  f"expected to need at most {_mib(need)}: the run goes on. A job that uses "
                  f"its whole budget would fail; lower its mem_mb to at most {room:,} to say "
                  "so"]


def address_space_problem(config: dict, plan) -> str | None:
    """The problem of :func:`address_space_check` alone."""
    return address_space_check(config, plan)[0]
