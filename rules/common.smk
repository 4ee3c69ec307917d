# Config validation, wildcard constraints, and the input functions of every rule.
import functools
import inspect
import json
import os
import sys
from pathlib import Path

# The workflow runs its own library: its src/ goes first on the path (also when this workflow is
# used as a module of another one, whose basedir is elsewhere), jobs get it on PYTHONPATH, and the
# code hashes below are taken from the package actually imported.
WORKFLOW_DIR = Path(workflow.current_basedir).parent
sys.path.insert(0, str(WORKFLOW_DIR / "src"))
import modelvar  # noqa: E402

SRC = Path(modelvar.__file__).parent
from modelvar.models import registry
from modelvar.pipeline import result_tables as tables
from modelvar.planning.code_hash import code_version
from modelvar.planning.config_check import (
    ConfigProblems,
    check_config,
    fill_schema_defaults,
    min_class_size,
    read_schema,
)
from modelvar.planning.job_recipes import (
    clamp_future_times,
    forget_dry_run,
    record_recipe,
    source_digest,
)
from modelvar.planning.plan import (
    SPEEDUP_SETTINGS,
    PlanError,
    plan_study,
    runtime_minutes,
)
from modelvar.planning.run_lock import hold_activity_lock
from modelvar.planning.workflow_config import ConfigError, check_config_file
from modelvar.table_files import forget_damaged, write_text

try:  # the attribute Snakemake reads a function's parameters from (with_known_signature)
    from snakemake.common import FUNC_OVERWRITE_PARAMS_ATTR
except ImportError:  # a Snakemake without it inspects every function, as before
    FUNC_OVERWRITE_PARAMS_ATTR = None

# While this process lives, scripts/run.sh knows a run of this workflow is alive here and leaves
# Snakemake's locks alone (modelvar.planning.run_lock).
hold_activity_lock(Path.cwd())

# Every problem of the config and its datasets at once, before any job (dry runs too); then the
# schema's defaults are filled in (as Snakemake's validate() does), and the plan
# (modelvar.planning.plan) makes the jobs: which cells, repeats and runs each fit job holds, and
# its resources. Every load of the workflow (SLURM job steps too) makes the same plan: it reads
# only the config and the datasets' shapes (peeked from the data, or the profiles of OpenML
# datasets).
SCHEMA_PATH = WORKFLOW_DIR / "workflow" / "schemas" / "config.schema.yaml"
try:
    # duplicate keys, aliases, templating: refused (modelvar.planning.workflow_config)
    _DEFAULT_CONFIG = WORKFLOW_DIR / "config" / "config.yaml"
    for _file in workflow.overwrite_configfiles or [_DEFAULT_CONFIG]:
        check_config_file(_file)
    SCHEMA = read_schema(SCHEMA_PATH)
    STUDY = check_config(config, SCHEMA)
    fill_schema_defaults(config, SCHEMA)
    PLAN = plan_study(config, STUDY.schemas)
except (ConfigProblems, ConfigError, PlanError) as exc:
    sys.exit(f"modelvar: {exc}")
if workflow.is_main_process:
    for _warning in STUDY.warnings + PLAN.warnings():
        print(f"modelvar: warning: {_warning}", file=sys.stderr)
    # A job whose files are not what it wrote (missing, truncated, replaced) loses its
    # manifest, the output `all` asks for, so that this run redoes it
    # (modelvar.table_files.forget_damaged).
    for _line in forget_damaged(config["results_dir"]):
        print(f"modelvar: missing or damaged output: {_line}", file=sys.stderr)
    forget_dry_run(config["results_dir"])
    # file times in the future (a clock skew) would hide every change (job_recipes docstring)
    _future = clamp_future_times(config["results_dir"])
    if _future:
        print(
            f"modelvar: warning: {len(_future)} file(s) of {config['results_dir']} were dated "
            f"in the future (clock skew?), e.g. {_future[0]}; set to the present",
            file=sys.stderr,
        )


# Downloads need the internet, which cluster compute nodes often lack: run them on the head node.
localrules:
    prepare_dataset,
    dataset_overview,


RESULTS = config["results_dir"]
DATASETS = list(config["datasets"])
CLASSIFIERS = registry.classifier_names(config)
SETTINGS = config.get("classifier_settings", {})
GROUPED = config.get("grouped", {}).get("by", {})
GROUPED_METRICS = config.get("grouped", {}).get("metrics", ["ec_global", "pa"])
SIMULATION = config.get("simulation", {})
SIM_DISTRIBUTIONS = ["uniform", "exponential", "multimodal", "step"]
SIM_CLASSES = SIMULATION.get("n_classes", [2, 5, 10])
DIRICHLET_FIGURES = ["class_densities", "h_ci_densities", "ci_vs_h"]


wildcard_constraints:
    dataset=r"[A-Za-z0-9][A-Za-z0-9._-]*",
    classifier=registry.wildcard(among=CLASSIFIERS),
    job=r"[a-z0-9_]+(\+\d+)?(\.c\d+)?(\.r\d+(-\d+|\.k\d+-\d+))?",
    n_classes=r"\d+",


# Each rule's code version (a params entry, so that editing the library reruns the rule:
# Snakemake does not notice changes inside an imported package) is a hash of the import closure
# of its job's module, computed from the code (modelvar.planning.code_hash), never listed here.
JOB_COMMANDS = (
    "prepare",
    "dataset-overview",
    "tune",
    "fit",
    "pairwise",
    "grouped",
    "figures",
    "findings",
    "simulate",
    "evaluate-simulation",
    "dirichlet",
)
CODE = {command: code_version(command) for command in JOB_COMMANDS}


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


# A log-only setting reaches the fit jobs through the environment too: changing it must not
# rerun them (their command text and params decide that).
os.environ["MODELVAR_WARN_CHANGED_BELOW"] = str(
    config["perturbation"].get("warn_changed_below", 0.5)
)


envvars:
    "MODELVAR_PYTHON",
    "PYTHONPATH",
    "MODELVAR_WARN_CHANGED_BELOW",


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
# `resources.<group>` says otherwise; `fit_mlp` and `tune_gpu` fall back to the config's `fit`
# and `tune` values. Fit, metrics and grouped jobs get mem_mb and runtime from the plan (its cost
# model), which the config's values can raise but not lower.
DEFAULT_RESOURCES = {
    "prepare": (1, 1000, 10),
    "tune": (1, 2000, 240),
    "tune_gpu": (1, 2000, 240),
    "fit": (1, 0, 0),
    "fit_mlp": (1, 0, 0),
    "pairwise": (1, 0, 0),
    "grouped": (1, 0, 0),
    "aggregate": (1, 4000, 30),
    "plot": (1, 2000, 20),
    "simulate": (1, 2000, 30),
}


def resource(group, key):
    configured = config.get("resources", {})
    default = dict(zip(("threads", "mem_mb", "runtime"), DEFAULT_RESOURCES[group]))[key]
    cpu_group = {"fit_mlp": "fit", "tune_gpu": "tune"}.get(group)
    if cpu_group:
        default = configured.get(cpu_group, {}).get(key, default)
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


def planned_resources(group, job_of, **extra):
    """mem_mb and runtime of a plan-sized job (`job_of(wildcards)`: its FitJob/MetricsJob)."""
    mem_mb, runtime = resource(group, "mem_mb"), resource(group, "runtime")
    return {
        "mem_mb": with_known_signature(
            lambda wildcards: max(job_of(wildcards).mem_mb, mem_mb)
        ),
        "runtime": with_known_signature(
            lambda wildcards: max(runtime_minutes(job_of(wildcards).seconds), runtime)
        ),
        **extra,
    }


@functools.cache
def takes_only_wildcards(function):
    """Whether a params function reads only the wildcards (not input or output paths)."""
    return list(inspect.signature(function).parameters) == ["wildcards"]


def with_known_signature(function):
    """Store the function's parameters on it, where Snakemake looks for them first
    (`snakemake.common.get_function_params`, which reads the attribute named by
    `FUNC_OVERWRITE_PARAMS_ATTR` before it calls `inspect.signature`), and its signature (PEP
    362's `__signature__`, for any other caller). Snakemake asks for the parameters of every
    input, params and resources function of every job: ~15,000 times in the full study's dry
    run, 12 µs a time for a plain function, ~2 µs with `__signature__` alone, an attribute
    read with both (`make bench-dryrun`)."""
    signature = inspect.signature(function)
    function.__signature__ = signature
    if FUNC_OVERWRITE_PARAMS_ATTR:
        setattr(function, FUNC_OVERWRITE_PARAMS_ATTR, signature.parameters)
    return function


def recipe_of(rule_name):
    """The input function of a job's recipe (modelvar.planning.job_recipes): the rule's params
    that do not derive from input or output paths (those files are inputs themselves), and a
    file dataset's content digest, recorded in the results folder so that a change reruns the
    job even where Snakemake's metadata is gone."""

    @with_known_signature
    def recipe(wildcards):
        def values():  # called only where the recipe is compared or written
            out = {}
            for name, value in workflow.get_rule(rule_name).params.items():
                if callable(value):
                    if not takes_only_wildcards(value):
                        continue
                    value = value(wildcards)
                out[name] = value
            if rule_name == "prepare_dataset":
                spec = config["datasets"][wildcards.dataset]
                if spec["source"] == "file":
                    out["source_sha256"] = source_digest(spec["path"], RESULTS)
            return out

        return str(
            record_recipe(
                RESULTS,
                rule_name,
                dict(wildcards.items()),
                values,
                dry_run=workflow.dryrun,
            )
        )

    return recipe


def manifest_path(rule, *wildcards):
    """Where a job records what it wrote (modelvar.table_files; `modelvar verify` reads it)."""
    key = Path(*(f"{{{w}}}" for w in wildcards)).as_posix() if wildcards else "job"
    return f"{RESULTS}/.modelvar/manifests/{rule}/{key}.json"


TUNED = config["hparams"] == "tuned"


# ----------------------------------------------------------------------------- the plan's jobs
def fit_job(wildcards):
    return PLAN.fit_job(wildcards.dataset, wildcards.classifier, wildcards.job)


def metrics_job(wildcards):
    return PLAN.metrics_job(wildcards.dataset, wildcards.classifier, wildcards.job)


def classifier_plans():
    """(dataset, classifier, its ClassifierPlan) of every planned dataset × classifier."""
    for ds, dataset_plan in PLAN.datasets.items():
        for clf, clf_plan in dataset_plan.classifiers.items():
            yield ds, clf, clf_plan


def predictions_file(dataset, classifier, job):
    return tables.predictions_path(RESULTS, dataset, classifier, job)


def table_file(table, dataset, classifier, job):
    return tables.table_path(RESULTS, table, dataset, classifier, job)


def dataset_tables(dataset, table):
    """Every file of one table of a dataset: per (classifier, job) of the plan."""
    plan = PLAN.datasets[dataset]
    if table == "runs":
        return [
            table_file(table, dataset, clf, job.id)
            for clf, clf_plan in plan.classifiers.items()
            for job in clf_plan.fit_jobs
        ]
    return [
        table_file(table, dataset, clf, job.id)
        for clf, clf_plan in plan.classifiers.items()
        for job in clf_plan.metrics_jobs
    ]


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


def get_fit_job_args(wildcards):
    """The cells, repeats, runs and probability form of a fit job, as CLI words."""
    job = fit_job(wildcards)
    return [
        "--cells",
        *job.cells,
        "--repeats",
        *map(str, job.repeats),
        "--run-block",
        *map(str, job.runs),
        "--probabilities",
        PLAN.datasets[wildcards.dataset].probabilities,
    ]


def get_metrics_predictions(wildcards):
    job = metrics_job(wildcards)
    return [
        predictions_file(wildcards.dataset, wildcards.classifier, fit)
        for fit in job.fit_jobs
    ]


def get_classifier_settings(wildcards):
    """This classifier's `classifier_settings` entry as JSON, with a declared classifier's
    declaration (modelvar.models.user: what its jobs build it from): a param of its fit jobs
    only, so changing one classifier's settings or declaration reruns only its jobs. Without
    the GPU speed-ups (SPEEDUP_SETTINGS), which only the plan reads."""
    own = {
        k: v
        for k, v in SETTINGS.get(wildcards.classifier, {}).items()
        if k not in SPEEDUP_SETTINGS
    }
    return json.dumps({**own, **get_declaration(wildcards)}, sort_keys=True)


def get_declaration(wildcards):
    """A declared classifier's declaration as {"declared": …}; {} for a built-in."""
    spec = registry.spec(wildcards.classifier)
    return {} if spec.built_in else {"declared": spec.settings}


def get_tune_settings(wildcards):
    """A declared classifier's declaration, and `gpu` (the job records its rule; on a GPU the
    trials are other bits) and `epochs` (trials train as long as the fits) where the config
    sets them."""
    own = SETTINGS.get(wildcards.classifier, {})
    chosen = {k: own[k] for k in ("gpu", "epochs") if k in own}
    return json.dumps({**get_declaration(wildcards), **chosen}, sort_keys=True)


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


from modelvar.study import figures as figure_registry  # noqa: E402

DESIGN = config.get("design", "both")
# the registry, not the plotting stack: loading the workflow imports no matplotlib
FIGURES = figure_registry.figures_of_design(DESIGN)
FIGURE_TABLES = figure_registry.tables_of(FIGURES)
GROUPED_FIGURES = [
    f.name for f in figure_registry.DATASET_FIGURES if f.part == "grouped"
]
# the levels, not the log-only warning threshold: changing it reruns no figure or finding
PERTURBATION_JSON = json.dumps(
    {
        k: v
        for k, v in config.get("perturbation", {}).items()
        if k != "warn_changed_below"
    },
    sort_keys=True,
)
# The report, in reading order: Snakemake sorts categories and labelled entries by name
FINDINGS_CATEGORY, DATA_CATEGORY, SIMULATION_CATEGORY = (
    "1. Findings",
    "2. Data",
    "4. Simulation",
)


def dataset_category(wildcards):
    """A dataset's report category, numbered in the config's order."""
    return f"3.{DATASETS.index(wildcards.dataset) + 1:02d}. {wildcards.dataset}"


def figure_label(name):
    """The report label of a figure: its place in the reading order and what it shows."""
    order = [*FIGURES, *GROUPED_FIGURES]
    title = figure_registry.figure(name).title
    return {"figure": f"{order.index(name) + 2:02d}. {title}"}


def figure_table_args():
    """The figures job's table options, for the tables the drawn figures read."""
    return " ".join(f"--{t} {{input.{t}:q}}" for t in FIGURE_TABLES)


def get_figure_inputs(wildcards):
    return {
        **{t: dataset_tables(wildcards.dataset, t) for t in FIGURE_TABLES},
        "meta": f"{RESULTS}/datasets/{wildcards.dataset}.json",
    }


FINDINGS_INPUT_TABLES = ("summary", "agreement", "runs")


def get_findings_inputs(wildcards):
    return {
        **{
            t: [f for ds in DATASETS for f in dataset_tables(ds, t)]
            for t in FINDINGS_INPUT_TABLES
        },
        "meta": [f"{RESULTS}/datasets/{ds}.json" for ds in DATASETS],
    }


# The report's first screen (Snakemake's global description): the study's answer, which the
# findings job writes (ANSWER: headline sentences and figure), above this reading guide; the
# guide alone before a run.
REPORT_GUIDE = WORKFLOW_DIR / "workflow" / "report" / "workflow.rst"
ANSWER = f"{RESULTS}/findings/answer.rst"


def report_landing():
    """The report's global description: the findings' answer with the guide below it (written
    to RESULTS/.modelvar/report-landing.rst when it changes), else the guide alone."""
    answer = Path(ANSWER)
    if not answer.is_file():
        return str(REPORT_GUIDE)
    landing = Path(RESULTS, ".modelvar", "report-landing.rst").resolve()
    text = (
        answer.read_text()
        + "\nHow to read this report\n-----------------------\n\n"
        + REPORT_GUIDE.read_text()
    )
    if not landing.is_file() or landing.read_text() != text:
        write_text(text, landing)
    return str(landing)


def refresh_report_landing():
    """On success: a report made after this run (--report-after-run, scripts/run.sh) reuses
    the workflow parsed before the run, when the landing text did not exist yet; point its
    global description at it now (the attribute the `report:` directive sets)."""
    from snakemake.sourcecache import infer_source_file

    workflow.report_text = infer_source_file(report_landing())


FINDINGS_TABLES = (
    "sources",
    "study_sources",
    "margins",
    "comparison",
    "study_comparison",
    "dose_response",
    "dose_summary",
    "components",
    "study_components",
    "claims",
    "strength",
)
# the headline sources figure needs the one-at-a-time cells; the classifiers' comparison
# those cells and two classifiers (modelvar.jobs.findings draws the same set)
# a dose-response figure where some family runs two or more levels besides none alone
DOSE_FIGURE = DESIGN != "factorial" and any(
    len([lv for lv in levels if lv not in ("none", 1.0, "fixed")]) >= 2
    for family, levels in config.get("perturbation", {}).items()
    if family in ("data", "categorical", "hparam", "downsample")
)
FINDINGS_FIGURES = (
    (("sources_of_variance",) if DESIGN != "factorial" else ())
    + ("accuracy_vs_reproducibility",)
    + (
        ("classifier_comparison",)
        if DESIGN != "factorial" and len(CLASSIFIERS) > 1
        else ()
    )
    + (("dose_response",) if DOSE_FIGURE else ())
)


def planned_tables():
    """Every table and predictions file the plan's fit, metrics and grouped jobs write."""
    out = []
    for ds, clf, plan in classifier_plans():
        for job in plan.fit_jobs:
            out += [
                predictions_file(ds, clf, job.id),
                table_file("runs", ds, clf, job.id),
            ]
        names = tables.METRIC_TABLES + (tables.GROUPED_TABLES if ds in GROUPED else ())
        out += [
            table_file(t, ds, clf, job.id) for job in plan.metrics_jobs for t in names
        ]
    return out


def planned_manifests():
    """The manifest of every job (each records every output of its job but the log), in the
    order data flows."""
    out = [
        manifest_path("prepare_dataset", "dataset").format(dataset=ds)
        for ds in DATASETS
    ]
    out.append(manifest_path("dataset_overview"))
    if TUNED:
        out += [
            manifest_path("tune", "dataset", "classifier").format(
                dataset=ds, classifier=clf
            )
            for ds in DATASETS
            for clf in CLASSIFIERS
        ]
    for ds, clf, plan in classifier_plans():
        jobs = [("fit", job.id) for job in plan.fit_jobs]
        jobs += [("pairwise_metrics", job.id) for job in plan.metrics_jobs]
        if ds in GROUPED:
            jobs += [("grouped_metrics", job.id) for job in plan.metrics_jobs]
        out += [
            manifest_path(rule, "dataset", "classifier", "job").format(
                dataset=ds, classifier=clf, job=job
            )
            for rule, job in jobs
        ]
    for ds in DATASETS:
        out.append(manifest_path("figures", "dataset").format(dataset=ds))
        if ds in GROUPED:
            out.append(
                manifest_path("group_disparities_figure", "dataset").format(dataset=ds)
            )
    out.append(manifest_path("findings"))
    if SIMULATION.get("enabled", False):
        out += [
            manifest_path("simulate_metrics", "n_classes").format(n_classes=c)
            for c in SIM_CLASSES
        ]
        out += [
            manifest_path("evaluate_simulation"),
            manifest_path("dirichlet_simulation"),
        ]
    return out


def get_final_outputs(wildcards):
    """What `all` asks for: the manifest of every job, the last file it writes, which records
    every other output. Snakemake reruns a job for a missing output only where some job asks
    for that file; a missing output that no job reads is found at the load instead
    (modelvar.table_files.forget_damaged deletes its job's manifest, so the job runs again).
    Asking for every output itself would cost the full study's dry run ~8 % more for 1,650
    more files (docs/decisions.md, "Workflow load")."""
    return planned_manifests()


def start_run():
    """When jobs start (onstart; not for dry runs): one run per results folder, from any working
    directory; the invocation is recorded for `modelvar verify`'s regenerate commands; tables
    of jobs that a changed config removed from the plan are deleted once their replacements
    exist (result_tables docstring)."""
    from modelvar.planning.run_lock import start_run as start

    start(
        RESULTS, sys.argv[1:], workflow.main_snakefile, workflow.overwrite_configfiles
    )
    tidy_partitions(warn_foreign=True)


def tidy_partitions(*, warn_foreign=False):
    """Delete the tables of jobs no longer in the plan whose replacements all exist (at a
    run's start, for an earlier interrupted run, and at its end)."""
    stale, foreign = tables.remove_stale(
        RESULTS,
        planned_tables(),
        [(ds, clf) for ds, clf, _ in classifier_plans()],
    )
    if stale:
        print(
            f"modelvar: removed {len(stale)} table(s) of jobs no longer in the plan "
            f"(the config regrouped the fits; their replacements exist), e.g. {stale[0]}",
            file=sys.stderr,
        )
    if foreign and warn_foreign:
        print(
            f"modelvar: warning: {len(foreign)} parquet file(s) in the results' table "
            f"folders were not written by this workflow, e.g. {foreign[0]}; they are left "
            "alone and not read, but pandas.read_parquet of the folder would read them",
            file=sys.stderr,
        )


def run_summary():
    """What the finished run holds: fits, fit time and accuracy per dataset, and the fit jobs
    whose time the plan missed by more than 2x (on success)."""
    estimates = {
        table_file("runs", ds, clf, job.id): (f"{ds} {clf} {job.id}", job.seconds)
        for ds, clf, clf_plan in classifier_plans()
        for job in clf_plan.fit_jobs
    }
    return tables.study_summary(
        [p for ds in DATASETS for p in dataset_tables(ds, "runs")], RESULTS, estimates
    )


for _function in [f for name, f in globals().items() if name.startswith("get_")]:
    if inspect.isfunction(_function):
        with_known_signature(_function)
