"""Benchmark: the dry run of the study configs against a bare Snakemake DAG with as many jobs
(issue 23: the full study's ≤ 1.5× the CPU of the bare DAG; issue 8's
≤ 10,000 jobs).

    python benchmarks/bench_dryrun.py [--rounds 3] [--configs default "full study"]

For each config, ``snakemake -n`` of modelvar's workflow and of a *bare* workflow are timed back
to back (alternating which goes first), ``--rounds`` times; the CPU seconds (user + system of the
child process) of each and their ratio are printed, min and median. The bare workflow has the
same jobs per rule and the plan's edges (a fit job reads its dataset's prepare job, a metrics job
its fit jobs, a dataset's figures its metrics jobs, the findings every figure job; the other
rules' jobs read nothing), and each rule only names files: no config, no validation, no plan, no
input functions of ours — what Snakemake itself costs for such a DAG.
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

BARE_SNAKEFILE = '''
import json

S = json.load(open(config["structure"]))


rule all:
    input:
        "findings.done",
        [f"{rule}/{i}.done" for rule, n in S["others"].items() for i in range(n)],


rule prepare:
    output:
        "prepare/{ds}.done",
    shell:
        "touch {output}"


rule fit:
    input:
        lambda w: f"prepare/{S['fit'][w.ds][w.job]}.done",
    output:
        "fit/{ds}/{job}.done",
    shell:
        "touch {output}"


rule metrics:
    input:
        lambda w: [f"fit/{w.ds}/{job}.done" for job in S["metrics"][w.ds][w.job]],
    output:
        "metrics/{ds}/{job}.done",
    shell:
        "touch {output}"


rule figures:
    input:
        lambda w: [f"metrics/{w.ds}/{job}.done" for job in S["metrics"][w.ds]],
    output:
        "figures/{ds}.done",
    shell:
        "touch {output}"


rule findings:
    input:
        [f"figures/{ds}.done" for ds in S["metrics"]],
    output:
        "findings.done",
    shell:
        "touch {output}"


rule other:
    output:
        "{rule}/{i}.done",
    wildcard_constraints:
        rule="other_[a-z_]+",
    shell:
        "touch {output}"
'''


def dry_run(snakefile: Path, args: list[str]) -> tuple[float, dict[str, int]]:
    """CPU seconds (user + system) of ``snakemake -n`` and its jobs per rule."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as work:
        proc = subprocess.run(
            [sys.executable, "-m", "snakemake", "-n", "-s", str(snakefile), "--directory", work,
             "--cores", "1", *args], capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    stats = proc.stdout[proc.stdout.rindex("Job stats:"):]
    counts = {m.group(1): int(m.group(2))
              for m in re.finditer(r"^(\w+)\s+(\d+)$", stats, re.M)}
    return cpu, counts


def bare_structure(files: list[str], counts: dict[str, int]) -> dict:
    """The bare DAG's jobs: the plan's fit and metrics jobs with their edges, a figures job per
    dataset, one findings job, and as many jobs as the real run's of every other rule."""
    from modelvar.pipeline.plan_report import plan_of_command_line

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
        bare = Path(tmp, "Snakefile")
        bare.write_text(BARE_SNAKEFILE)
        for name in args.configs:
            files = [str(REPO / f) for f in CONFIGS[name]]
            ours_args = ["--configfile", *files]
            _, counts = dry_run(REPO / "Snakefile", ours_args)  # warm the caches, count jobs
            structure = Path(tmp, "structure.json")
            structure.write_text(json.dumps(bare_structure(CONFIGS[name], counts)))
            bare_args = ["--config", f"structure={structure}"]
            _, bare_counts = dry_run(bare, bare_args)
            ours_s, bare_s = [], []
            for round_ in range(args.rounds):
                order = [(ours_s, REPO / "Snakefile", ours_args), (bare_s, bare, bare_args)]
                for times, snakefile, a in order[::1 if round_ % 2 == 0 else -1]:
                    times.append(dry_run(snakefile, a)[0])
            ratios = [o / b for o, b in zip(ours_s, bare_s, strict=True)]
            total, median = counts["total"], statistics.median(ratios)
            print(f"{name:12s} {total:6d} jobs (bare DAG {bare_counts['total']}): CPU modelvar "
                  f"min {min(ours_s):5.1f} s, median {statistics.median(ours_s):5.1f} s; bare "
                  f"min {min(bare_s):5.1f} s, median {statistics.median(bare_s):5.1f} s; ratio "
                  f"min {min(ratios):.2f}, median {median:.2f} (goal <= {TARGET_RATIO}); "
                  f"{total / TARGET_JOBS:.2f} of {TARGET_JOBS} jobs", flush=True)


if __name__ == "__main__":
    main()
