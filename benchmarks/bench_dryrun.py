"""Benchmark: the dry run of the study configs against a bare Snakemake DAG with as many jobs
(issue 55: the full study's ``snakemake -n`` ≤ 1.3× the CPU of the bare DAG and the README's
``bash scripts/run.sh -n`` ≤ 1.5×; issue 8's ≤ 10,000 jobs).

    python benchmarks/bench_dryrun.py [--rounds 3] [--configs default "full study"]

For each config, ``snakemake -n`` of modelvar's workflow and of a *bare* workflow are timed back
to back (alternating which goes first), ``--rounds`` times; the CPU seconds (user + system of the
child process) of each and their ratio are printed, min and median. The bare workflow has the
same jobs per rule and the plan's edges (a fit job reads its dataset's prepare job, a metrics job
its fit jobs, a dataset's figures its metrics jobs, the findings every figure job; the other
rules' jobs read nothing), and each rule only names files: no config, no validation, no plan, no
input functions of ours — what Snakemake itself costs for such a DAG.

A second bare workflow ("modelvar's files per job") has the same DAG, and each of its jobs names
as many inputs, outputs, logs and benchmark files as the jobs of the rule of ours it mirrors
(counted in our dry run's listing; median per rule): what Snakemake itself costs for our file
layout. modelvar over the first is the issue's ratio; over the second, what our own code (config
checks, plan, input functions, recipes, resources) adds to the engine's work on our files.

A third ("the floor") has the bare DAG's one file per job and what any job of a workflow that
meets this issue and the house rules declares: a log, a runtime and a memory limit from a
function of the job, a parameter from a function, a shell command that uses them. Over the bare
DAG it is the share of the issue's ratio that no layout of ours can save; modelvar over it is
what our files and code cost on top.

modelvar's Snakefile starts and ends with ``gc.freeze()`` (what is loaded is left out of the
garbage collector's passes), which speeds up Snakemake's own work on the DAG too: the bare
workflow is also timed with the same two freezes, and modelvar over that bare is the
like-for-like ratio (what our code adds, the freeze's gain on both sides).

modelvar is timed twice: a first dry run (no job has a recipe yet: a dry run writes none of
theirs, ``modelvar.running.job_recipes``), and one with every job's recipe written (as after a
run; written untimed by ``snakemake --dag``), where Snakemake lists a recipe folder per job.
"""

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIGS = {
    "default": ["config/config.yaml"],
    "preliminary": ["config/preliminary.yaml"],
    "full study": ["config/full-study.yaml", "config/openml/seed-study.yaml"],
}
TARGET_RATIO, TARGET_JOBS = 1.5, 10_000
#: issue 55: ``snakemake -n`` ≤ 1.3× the bare DAG, ``bash scripts/run.sh -n`` ≤ 1.5×
SNAKEMAKE_RATIO = 1.3

#: A bare rule: ``{inputs}`` its edges (and its extra inputs), ``{outputs}`` its files.
BARE_RULE = """
rule {name}:
    input:
{inputs}
    output:
{outputs}
{log}{benchmark}{declared}    wildcard_constraints:
        {constraint}
    shell:
        {shell}
"""

#: what the floor workflow's jobs declare besides their file: what this issue (a time and
#: memory limit per job, item 3) and the house rules (a log on every rule) ask of any job, and
#: a parameter from a function, all in a short shell command
FLOOR_DECLARED = """    resources:
        runtime=lambda wildcards, attempt: 10 * attempt,
        mem_mb=lambda wildcards, attempt: 100 * attempt,
    params:
        job=lambda wildcards: "/".join(wildcards),
"""
FLOOR_SHELL = '"echo {params.job:q} > {log:q}; touch {output:q}"'
BARE_SHELL = '"touch {output}"'

BARE_HEADER = '''
import json

S = json.load(open(config["structure"]))


rule all:
    input:
        "findings/x.o0",
        [f"{rule}/{i}.o0" for rule, n in S["others"].items() for i in range(n)],
'''

#: each bare rule's wildcards, its edge inputs (a Python expression of ``w``) and the rule of
#: ours whose files it mirrors ("other": the median of the rules it does not model)
BARE_RULES = {
    "prepare": ("prepare/{ds}", None, "prepare_dataset"),
    "fit": ("fit/{ds}/{job}", "[f\"prepare/{S['fit'][w.ds][w.job]}.o0\"]", "fit"),
    "metrics": ("metrics/{ds}/{job}",
                "[f\"fit/{w.ds}/{job}.o0\" for job in S['metrics'][w.ds][w.job]]",
                "pairwise_metrics"),
    "figures": ("figures/{ds}", "[f\"metrics/{w.ds}/{job}.o0\" for job in S['metrics'][w.ds]]",
                "figures"),
    "findings": ("findings/{x}", "[f\"figures/{ds}.o0\" for ds in S['metrics']]", "findings"),
    "other": ("{rule}/{i}", None, "other"),
}
#: a job of the bare DAG with one file: its output
ONE_FILE = {"input": 0, "output": 1, "log": 0, "benchmark": 0}


def bare_rule_files(files: dict[str, dict[str, int]] | None) -> dict[str, dict[str, int]]:
    """Per bare rule, the files of each of its jobs: ``files`` of the rule of ours it mirrors
    (:func:`files_per_rule`; one output without them), and ``extra``: its inputs beyond its
    edges (which count as one input of the job they mirror)."""
    out = {}
    for name, (_stem, edges, ours) in BARE_RULES.items():
        counts = (files or {}).get(ours, ONE_FILE)
        out[name] = {**counts, "extra": max(0, counts["input"] - (1 if edges else 0))}
    return out


#: what modelvar's Snakefile does first and last (its comment says why)
GC_FREEZE = "\nimport gc\n\ngc.freeze()\n"


def bare_snakefile(files: dict[str, dict[str, int]] | None = None, *,
                   freeze: bool = False, floor: bool = False) -> str:
    """The bare workflow. Without ``files`` every job names one output and reads only its edges
    (what Snakemake costs for the DAG's shape). With ``files`` (:func:`files_per_rule` of our
    dry run) each rule's jobs name as many inputs, outputs, logs and benchmark files as the
    jobs of the rule of ours it mirrors (the inputs beyond its edges are files that exist
    before the run, one folder per job, as our recipes): what Snakemake costs for our layout.
    ``freeze``: the workflow starts and ends with modelvar's ``gc.freeze()``. ``floor``: every
    job also names a log, per-job resources and a parameter (``FLOOR_DECLARED``)."""
    text = BARE_HEADER
    for name, counts in bare_rule_files(files).items():
        stem, edges, _ours = BARE_RULES[name]
        inputs = [f"        lambda w: {edges}," if edges else ""]
        inputs += [f'        "static/{stem}/x{i}",' for i in range(counts["extra"])]
        outputs = [f'        "{stem}.o{i}",' for i in range(max(1, counts["output"]))]
        log = (f'    log:\n        "logs/{stem}.log",\n' if counts["log"] or floor
               else "")
        bench = (f'    benchmark:\n        "benchmarks/{stem}.tsv",\n'
                 if counts["benchmark"] else "")
        constraint = {"other": 'rule="other_[a-z_]+",', "findings": 'x="x",'}.get(
            name, 'ds="[^/]+",')
        text += BARE_RULE.format(name=name, inputs="\n".join(i for i in inputs if i) or
                                 "        []", outputs="\n".join(outputs), log=log,
                                 benchmark=bench, constraint=constraint,
                                 declared=FLOOR_DECLARED if floor else "",
                                 shell=FLOOR_SHELL if floor else BARE_SHELL)
    return (GC_FREEZE + text + GC_FREEZE) if freeze else text


def files_per_rule(listing: str) -> dict[str, dict[str, int]]:
    """From a dry run's job listing: per rule, the median count over its jobs of the files it
    names as input, output, log and benchmark; ``"other"``: the median over the rules that the
    bare workflow does not model (tuning, overviews)."""
    per_rule: dict[str, dict[str, list[int]]] = {}
    for match in re.finditer(r"^(?:local)?rule (\w+):\n((?:    .*\n)+)", listing, re.M):
        fields = dict(re.findall(r"^    (\w+): (.*)$", match.group(2), re.M))
        counts = per_rule.setdefault(match.group(1), {})
        for key in ("input", "output", "log", "benchmark"):
            counts.setdefault(key, []).append(len(fields[key].split(", ")) if key in fields
                                               else 0)
    medians = {rule: {key: int(statistics.median(values)) for key, values in counts.items()}
               for rule, counts in per_rule.items()}
    modelled = {ours for _stem, _edges, ours in BARE_RULES.values()} | {"all", "fit_mlp",
                                                                       "grouped_metrics"}
    others = [counts for rule, counts in per_rule.items() if rule not in modelled]
    medians["other"] = {key: int(statistics.median(v for c in others for v in c[key]))
                        for key in ONE_FILE} if others else ONE_FILE
    return medians


def make_static_inputs(structure: dict, files: dict[str, dict[str, int]], work: Path) -> None:
    """Create the extra input files that the bare workflow with ``files`` reads (they exist
    before the run, as a study's recipes and tuning results do on a second dry run)."""
    jobs = {"prepare": [f"prepare/{ds}" for ds in structure["fit"]],
            "fit": [f"fit/{ds}/{job}" for ds, jobs in structure["fit"].items() for job in jobs],
            "metrics": [f"metrics/{ds}/{job}" for ds, jobs in structure["metrics"].items()
                        for job in jobs],
            "figures": [f"figures/{ds}" for ds in structure["fit"]],
            "findings": ["findings/x"],
            "other": [f"{rule}/{i}" for rule, n in structure["others"].items()
                      for i in range(n)]}
    for name, counts in bare_rule_files(files).items():
        for stem in jobs[name]:
            for i in range(counts["extra"]):
                path = work / "static" / stem / f"x{i}"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.touch()


def dry_run(snakefile: Path | None, args: list[str],
            setup=None) -> tuple[float, dict[str, int], str]:
    """CPU seconds (user + system) of ``snakemake -n`` (``snakefile`` None: the README's
    ``bash scripts/run.sh -n``, its helpers included) in a new working folder (``setup(folder)``
    first, untimed), its jobs per rule and its listing. Python caches the modules' bytecode as
    it does by default (the first, untimed run writes it; a ``PYTHONDONTWRITEBYTECODE`` set
    here would have every run compile our changed modules again, which no user's second load
    does: Snakemake's own are compiled when it is installed)."""
    with tempfile.TemporaryDirectory() as work:
        if setup:
            setup(Path(work))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        command = ([sys.executable, "-m", "snakemake", "-s", str(snakefile)] if snakefile
                   else ["bash", str(REPO / "scripts" / "run.sh")])
        proc = subprocess.run(
            [*command, "-n", "--directory", work, "--cores", "1", *args],
            capture_output=True, text=True, check=True,
            env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    stats = proc.stdout[proc.stdout.rindex("Job stats:"):]
    counts = {m.group(1): int(m.group(2))
              for m in re.finditer(r"^(\w+)\s+(\d+)$", stats, re.M)}
    return cpu, counts, proc.stdout


def bare_structure(files: list[str], counts: dict[str, int]) -> dict:
    """The bare DAG's jobs: the plan's fit and metrics jobs with their edges, a figures job per
    dataset, one findings job, and as many jobs as the real run's of every other rule."""
    from modelvar.running.workflow_config import plan_of_command_line

    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        plan, _ = plan_of_command_line(["--configfile", *files])
    finally:
        os.chdir(cwd)
    fit, metrics = {}, {}
    for name, ds in plan.datasets.items():
        fit[name], metrics[name] = {}, {}
        for clf, cp in ds.classifiers.items():
            for job in cp.fit_jobs:
                fit[name][f"{clf}.{job.id}"] = name
            for job in cp.metrics_jobs:
                metrics[name][f"{clf}.{job.id}"] = [f"{clf}.{j}" for j in job.fit_jobs]
    modelled = {"prepare_dataset": len(fit), "figures": len(fit), "findings": 1, "all": 1,
                "fit": 0, "fit_mlp": 0, "pairwise_metrics": 0}
    others = {f"other_{rule}": n for rule, n in counts.items()
              if rule not in modelled and rule != "total"}
    return {"fit": fit, "metrics": metrics, "others": others}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--configs", nargs="*", default=list(CONFIGS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.configs:
            files = [str(REPO / f) for f in CONFIGS[name]]
            ours_args = ["--configfile", *files]
            # warm the caches, count the jobs and their files
            _, counts, listing = dry_run(REPO / "Snakefile", ours_args)
            structure = bare_structure(CONFIGS[name], counts)
            structure_file = Path(tmp, "structure.json")
            structure_file.write_text(json.dumps(structure))
            bare_args = ["--config", f"structure={structure_file}"]
            bare, layout = Path(tmp, "bare.smk"), Path(tmp, "layout.smk")
            bare.write_text(bare_snakefile())
            bare_frozen = Path(tmp, "bare-frozen.smk")
            bare_frozen.write_text(bare_snakefile(freeze=True))
            floor = Path(tmp, "floor.smk")
            floor.write_text(bare_snakefile(floor=True))
            our_files = files_per_rule(listing)
            layout.write_text(bare_snakefile(our_files))

            def with_static(work, files=our_files, structure=structure):
                make_static_inputs(structure, files, work)

            def with_recipes(work, args=ours_args):
                # as after a run: `--dag` builds the DAG without the dry run's flag, so every
                # job's recipe is written (a dry run writes none of a new job's)
                subprocess.run([sys.executable, "-m", "snakemake", "--dag", "-s",
                                str(REPO / "Snakefile"), "--directory", str(work), "--cores",
                                "1", *args], capture_output=True, check=True)

            sides = {"modelvar": (REPO / "Snakefile", ours_args, None),
                     "run.sh": (None, ours_args, None),
                     "modelvar+recipes": (REPO / "Snakefile", ours_args, with_recipes),
                     "bare": (bare, bare_args, None),
                     "bare+freeze": (bare_frozen, bare_args, None),
                     "floor": (floor, bare_args, None),
                     "layout": (layout, bare_args, with_static)}
            jobs = {side: dry_run(*sides[side])[1]["total"]
                    for side in ("bare", "bare+freeze", "floor", "layout")}
            times: dict[str, list[float]] = {side: [] for side in sides}
            for round_ in range(args.rounds):
                order = list(sides) if round_ % 2 == 0 else list(sides)[::-1]
                for side in order:
                    times[side].append(dry_run(*sides[side])[0])
            total = counts["total"]
            print(f"{name}: {total} jobs (bare DAGs: {jobs['bare']}, {jobs['bare+freeze']}, "
                  f"{jobs['floor']}, {jobs['layout']}); CPU "
                  f"seconds, min / median of {args.rounds} rounds", flush=True)
            for side, label in (("modelvar", "modelvar, first dry run"),
                                ("run.sh", "bash scripts/run.sh -n"),
                                ("modelvar+recipes", "modelvar, every recipe written"),
                                ("bare", "bare DAG, one file per job"),
                                ("bare+freeze", "bare DAG + modelvar's gc.freeze()"),
                                ("floor", "floor: bare + log, limits, a param"),
                                ("layout", "bare DAG, modelvar's files per job")):
                print(f"  {label:36s} {min(times[side]):5.1f} / "
                      f"{statistics.median(times[side]):5.1f}", flush=True)
            for ours, base, goal in (("modelvar", "bare", f" (goal <= {SNAKEMAKE_RATIO})"),
                                     ("run.sh", "bare", f" (goal <= {TARGET_RATIO})"),
                                     ("modelvar+recipes", "bare", ""),
                                     ("modelvar", "bare+freeze", ""),
                                     ("floor", "bare", " (no layout saves this)"),
                                     ("modelvar", "floor", ""),
                                     ("modelvar", "layout", ""),
                                     ("modelvar+recipes", "layout", "")):
                ratios = [o / b for o, b in zip(times[ours], times[base], strict=True)]
                print(f"  ratio {ours} / {base}: min {min(ratios):.2f}, median "
                      f"{statistics.median(ratios):.2f}{goal}", flush=True)
            print(f"  {total / TARGET_JOBS:.2f} of {TARGET_JOBS} jobs", flush=True)


if __name__ == "__main__":
    main()
