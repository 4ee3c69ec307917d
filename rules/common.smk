# Config validation, wildcard constraints, and the input functions of every rule.
import hashlib
import json
import os
import sys
from pathlib import Path

import yaml
from snakemake.utils import validate

# The workflow runs its own library: its src/ goes first on the path (also when this workflow is
# used as a module of another one, whose basedir is elsewhere), jobs get it on PYTHONPATH, and the
# code hashes below are taken from the package actually imported.
WORKFLOW_DIR = Path(workflow.current_basedir).parent
sys.path.insert(0, str(WORKFLOW_DIR / "src"))
import modelvar  # noqa: E402

SRC = Path(modelvar.__file__).parent
from modelvar.pipeline.cells import grid as cell_grid
from modelvar.pipeline.config_check import ConfigProblems, check_config, min_class_size
from modelvar.pipeline.run_lock import hold_activity_lock

# While this process lives, scripts/run.sh knows a run of this workflow is alive here and leaves
# Snakemake's locks alone (modelvar.pipeline.run_lock).
hold_activity_lock(Path.cwd())

# Every problem of the config and its datasets at once, before any job (dry runs too); then
# Snakemake's validate() fills in the schema's defaults.
SCHEMA_PATH = WORKFLOW_DIR / "workflow" / "schemas" / "config.schema.yaml"
# Job steps (SLURM) load the workflow again: the main process has checked the datasets already.
try:
    STUDY = check_config(
        config,
        yaml.safe_load(SCHEMA_PATH.read_text()),
        datasets=workflow.is_main_process,
    )
except ConfigProblems as exc:
    sys.exit(f"modelvar: {exc}")
validate(config, schema=str(SCHEMA_PATH))
if workflow.is_main_process:
    for _warning in STUDY.warnings:
        print(f"modelvar: warning: {_warning}", file=sys.stderr)


# Downloads need the internet, which cluster compute nodes often lack: run them on the head node.
localrules:
    prepare_dataset,
    dataset_overview,


RESULTS = config["results_dir"]
DATASETS = list(config["datasets"])
CLASSIFIERS = list(config["classifiers"])
CELLS = [cell.id for cell in cell_grid(config["perturbation"])]
REPEATS = [f"{r:03d}" for r in range(config["split"]["repeats"])]


def split_cell(cell_id):
    """A cell id = <chunk>_<tail>: the chunk (data, categorical, hparam levels) names one fit
    job; the tail (downsampling, model-seed levels) varies inside it (issue 8: job count).
    """
    parts = cell_id.split("_")
    return "_".join(parts[:3]), "_".join(parts[3:])


CHUNKS = list(dict.fromkeys(split_cell(c)[0] for c in CELLS))
TAILS = list(dict.fromkeys(split_cell(c)[1] for c in CELLS))
GROUPED = config.get("grouped", {}).get("by", {})
GROUPED_METRICS = config.get("grouped", {}).get("metrics", ["ec_global", "pa"])
SIMULATION = config.get("simulation", {})
SIM_DISTRIBUTIONS = ["uniform", "exponential", "multimodal", "step"]
SIM_CLASSES = SIMULATION.get("n_classes", [2, 5, 10])
DIRICHLET_FIGURES = ["class_densities", "h_ci_densities", "ci_vs_h"]


wildcard_constraints:
    dataset=r"[A-Za-z0-9][A-Za-z0-9._-]*",
    classifier=r"lr-sgd|svm-sgd|xgb|mlp",
    cell=r"[a-z0-9]+(_[a-z0-9]+){4}",
    chunk=r"[a-z0-9]+_[a-z0-9]+_[a-z0-9]+",
    n_classes=r"\d+",
    repeat=r"\d{3}",


def code_version(*modules):
    """sha256 of the named modelvar source files: a params entry so that editing them reruns
    the rule (Snakemake does not notice changes inside an imported package)."""
    h = hashlib.sha256()
    for module in modules:
        for path in sorted(SRC.glob(module)):
            h.update(path.relative_to(SRC).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


METRICS_CORE = (
    "metrics/__init__.py",
    "metrics/pairwise.py",
    "metrics/agreement.py",
    "metrics/inference.py",
    "metrics/probabilistic.py",
    "metrics/tau.py",
    "metrics/summary.py",
)
CODE = {
    "prepare": code_version(
        "data/__init__.py",
        "data/canonical.py",
        "data/sources.py",
        "data/readers.py",
        "data/openml_source.py",
        "data/embedded/registry.json",
    ),
    "fit": code_version(
        "data/canonical.py",
        "seeding.py",
        "data/splits.py",
        "pipeline/cells.py",
        "data/preprocess.py",
        "data/perturb.py",
        "models/*.py",
        "pipeline/fitting.py",
        "pipeline/predictions.py",
    ),
    "tune": code_version(
        "data/canonical.py",
        "seeding.py",
        "data/splits.py",
        "data/preprocess.py",
        "models/*.py",
    ),
    "pairwise": code_version(
        *METRICS_CORE, "pipeline/predictions.py", "pipeline/metric_tables.py"
    ),
    "grouped": code_version(
        *METRICS_CORE,
        "metrics/grouped.py",
        "pipeline/predictions.py",
        "pipeline/grouped_tables.py",
    ),
    "aggregate": code_version("pipeline/aggregate.py", "pipeline/cells.py"),
    "overview": code_version("pipeline/dataset_overview.py"),
    "plot": code_version("plots/__init__.py", "plots/common.py", "plots/study.py"),
    "simulate": code_version(
        "simulation/class_distributions.py",
        "simulation/metric_study.py",
        "metrics/pairwise.py",
        "seeding.py",
    ),
    "simulate_eval": code_version(
        "simulation/class_distributions.py",
        "simulation/metric_study.py",
        "metrics/pairwise.py",
        "plots/__init__.py",
        "plots/common.py",
        "plots/simulation.py",
    ),
    "dirichlet": code_version(
        "simulation/dirichlet.py",
        "metrics/probabilistic.py",
        "plots/__init__.py",
        "plots/common.py",
        "plots/simulation.py",
        "seeding.py",
    ),
}


def get_dirichlet_cases():
    """The Dirichlet cases from the config, or the seed's three (modelvar.simulation.dirichlet)."""
    from modelvar.simulation.dirichlet import SEED_CASES

    return SIMULATION.get("dirichlet", {}).get("cases", SEED_CASES)


# Jobs run the interpreter that runs the workflow (a venv's snakemake works without the venv on
# PATH), or with --sdm conda the rule's environment's python; either imports the modelvar whose
# code is hashed above (its folder leads PYTHONPATH). Both go into this process's environment,
# which every job inherits (SLURM job steps load the workflow again and set it there), so that
# the commands' text is the same wherever the project and its venv live: Snakemake reruns a job
# whose command text changed, and moving the project must not rerun the study.
_CONDA = any(
    "conda" in str(m).lower() for m in workflow.deployment_settings.deployment_method
)
os.environ["MODELVAR_PYTHON"] = "python" if _CONDA else sys.executable
_PATHS = [str(SRC.parent), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in dict.fromkeys(_PATHS) if p)


envvars:
    "MODELVAR_PYTHON",
    "PYTHONPATH",


def modelvar_job(arguments, *, blas_threads=False):
    """The shell command of a job: `python -m modelvar ARGUMENTS` (Snakemake placeholders in
    ARGUMENTS, every value quoted with :q), built here so that it also works when the workflow is
    a module; `blas_threads` caps OpenMP/BLAS threads at the job's threads."""
    blas = (
        "OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} "
        if blas_threads
        else ""
    )
    return f'{blas}"$MODELVAR_PYTHON" -m modelvar {arguments}'


# Resources per group of rules, as (threads, mem_mb, runtime in minutes), unless the config's
# `resources.<group>` says otherwise; `fit_mlp` falls back to the config's `fit` values.
DEFAULT_RESOURCES = {
    "prepare": (1, 1000, 10),
    "tune": (1, 2000, 240),
    "fit": (1, 2000, 120),
    "fit_mlp": (1, 4000, 240),
    "pairwise": (1, 2000, 30),
    "grouped": (1, 2000, 30),
    "aggregate": (1, 4000, 30),
    "plot": (1, 2000, 20),
    "simulate": (1, 2000, 30),
}


def resource(group, key):
    configured = config.get("resources", {})
    default = dict(zip(("threads", "mem_mb", "runtime"), DEFAULT_RESOURCES[group]))[key]
    if group == "fit_mlp":
        default = configured.get("fit", {}).get(key, default)
    return configured.get(group, {}).get(key, default)


def threads_of(group):
    return resource(group, "threads")


def resources_of(group, **extra):
    """The `resources:` of a rule group (mem_mb, runtime), plus e.g. gpu=1."""
    return {
        "mem_mb": resource(group, "mem_mb"),
        "runtime": resource(group, "runtime"),
        **extra,
    }


def manifest_path(rule, *wildcards):
    """Where a job records what it wrote (modelvar.table_files; `modelvar verify` reads it)."""
    key = Path(*(f"{{{w}}}" for w in wildcards)).as_posix() if wildcards else "job"
    return f"{RESULTS}/.modelvar/manifests/{rule}/{key}.json"


TUNED = config["hparams"] == "tuned"


def get_fit_inputs(wildcards):
    files = get_dataset_files(wildcards)
    if TUNED:
        files["hparams"] = (
            f"{RESULTS}/tuning/{wildcards.dataset}/{wildcards.classifier}/best.json"
        )
    return files


def get_hparams_arg(wildcards, input):
    """`--hparams best.json` for tuned studies (a list, so that `:q` quotes each word)."""
    return ["--hparams", input.hparams] if TUNED else []


def get_classifier_settings(wildcards):
    """This classifier's `classifier_settings` entry as JSON: a param of its fit jobs only, so
    changing one classifier's settings reruns only that classifier's jobs."""
    return json.dumps(
        config.get("classifier_settings", {}).get(wildcards.classifier, {}),
        sort_keys=True,
    )


def get_dataset_spec(wildcards):
    return json.dumps(config["datasets"][wildcards.dataset], sort_keys=True)


def get_dataset_source(wildcards):
    """A `file` dataset's file is a real input of its prepare job: replacing the file's content
    reruns exactly what depends on that dataset."""
    spec = config["datasets"][wildcards.dataset]
    return {"source": spec["path"]} if spec["source"] == "file" else {}


def get_dataset_files(wildcards):
    base = f"{RESULTS}/datasets/{wildcards.dataset}"
    return {"data": f"{base}.parquet", "meta": f"{base}.json"}


def chunk_paths(kind, name):
    """Paths of one chunk job's per-cell files, cell-major (`kind` = predictions, runs, metrics)."""
    base = f"{RESULTS}/{{dataset}}/{{classifier}}/{{chunk}}"
    if kind == "metrics":
        return f"{RESULTS}/{{dataset}}/{{classifier}}/metrics/{{chunk}}/{name}.parquet"
    if kind == "runs":
        return [f"{base}_{tail}/runs.parquet" for tail in TAILS]
    return [
        f"{base}_{tail}/{kind}/repeat-{r}.parquet" for tail in TAILS for r in REPEATS
    ]


def get_chunk_cells(wildcards):
    return [f"{wildcards.chunk}_{tail}" for tail in TAILS]


def get_chunk_predictions(wildcards):
    return [
        p.format(
            dataset=wildcards.dataset,
            classifier=wildcards.classifier,
            chunk=wildcards.chunk,
        )
        for p in chunk_paths("predictions", None)
    ]


def chunk_tables(dataset, table):
    """One metric table per (classifier, chunk) of a dataset; each holds the chunk's cells."""
    return [
        f"{RESULTS}/{dataset}/{clf}/metrics/{chunk}/{table}.parquet"
        for clf in CLASSIFIERS
        for chunk in CHUNKS
    ]


def get_aggregate_inputs(wildcards):
    ds = wildcards.dataset
    files = {
        t: chunk_tables(ds, t)
        for t in ("summary", "per_run", "agreement", "per_sample")
    }
    files["runs"] = [
        f"{RESULTS}/{ds}/{clf}/{cell}/runs.parquet"
        for clf in CLASSIFIERS
        for cell in CELLS
    ]
    return files


AGGREGATED_TABLES = ["summary", "per_run", "agreement", "per_sample", "runs"]
FIGURES = [
    "gross_accuracy_grid",
    "accuracy_by_data_perturbation",
    "repeat_accuracy_ranges",
    "ec_distributions",
    "repeat_ec_means",
    "repeat_ec_ranges",
    "per_sample_instability",
]


def aggregated(dataset, table):
    return f"{RESULTS}/aggregated/{table}/dataset={dataset}/part-0.parquet"


def get_figure_inputs(wildcards):
    return {
        t: aggregated(wildcards.dataset, t)
        for t in ("summary", "per_run", "per_sample")
    }


def dataset_outputs(ds):
    out = [aggregated(ds, t) for t in AGGREGATED_TABLES]
    out += [
        f"{RESULTS}/{ds}/figures/{fig}.{ext}"
        for fig in FIGURES
        for ext in ("png", "pdf")
    ]
    if ds in GROUPED:
        out += [aggregated(ds, t) for t in ("grouped", "disparities")]
        out += [
            f"{RESULTS}/{ds}/figures/group_disparities.{ext}" for ext in ("png", "pdf")
        ]
    return out


def get_final_outputs():
    out = []
    if TUNED:
        out += [
            f"{RESULTS}/tuning/{ds}/{clf}/best.json"
            for ds in DATASETS
            for clf in CLASSIFIERS
        ]
    out.append(f"{RESULTS}/datasets/overview.html")
    for ds in DATASETS:
        out += dataset_outputs(ds)
    if SIMULATION.get("enabled", False):
        out += [
            f"{RESULTS}/simulation/metrics/{name}"
            for name in (
                "ranking.html",
                "metric_vs_accuracy.png",
                "metric_by_distribution.png",
            )
        ]
        out += [
            f"{RESULTS}/simulation/dirichlet/{fig}.png" for fig in DIRICHLET_FIGURES
        ]
        out.append(f"{RESULTS}/simulation/dirichlet/spearman.html")
    return out


def start_run():
    """When jobs start (onstart; not for dry runs): one run per results folder, from any working
    directory; the invocation is recorded for `modelvar verify`'s regenerate commands.
    """
    from modelvar.pipeline.run_lock import start_run as start

    start(
        RESULTS, sys.argv[1:], workflow.main_snakefile, workflow.overwrite_configfiles
    )


def run_summary():
    """What the finished run holds: fits, fit time and files per dataset (printed on success)."""
    from modelvar.pipeline.aggregate import study_summary

    return study_summary(RESULTS, DATASETS)
