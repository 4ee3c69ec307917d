# Snakemake glue: the config's load and check, the wildcard constraints, the rules' resources
# and the `get_*` input functions. What the workflow makes and what each rule may use are
# decided in the library (modelvar.planning.outputs), which the jobs ask too.
import inspect
import json
import os
import sys
from pathlib import Path

# The workflow runs the library beside its rules where they lie on disk (a checkout, or a module
# from a local path): its src/ goes first on the path. A module deployed from a repository
# (snakedeploy's `github(…)`) has its rules read from there and no source on disk: modelvar comes
# from the environment (README, "Deploy into your own project"). Jobs get the package imported
# here on PYTHONPATH, and the code hashes below are taken from it.
try:
    _SOURCE = Path(workflow.current_basedir).parent / "src"
except TypeError:  # the rules are read from a repository, not from a folder
    _SOURCE = None
if _SOURCE is not None and (_SOURCE / "modelvar").is_dir():
    sys.path.insert(0, str(_SOURCE))
try:
    import modelvar
except ImportError:
    sys.exit(
        "modelvar: this workflow's library is neither beside its rules nor installed in this "
        "environment: install it there (pip install 'modelvar[pipeline] @ git+URL@TAG', the "
        "repository and tag the module is deployed from)"
    )

SRC = Path(modelvar.__file__).parent
from modelvar import run_watch
from modelvar.models import registry
from modelvar.pipeline import result_tables as tables
from modelvar.planning import outputs, probe_jobs
from modelvar.planning.config_check import min_class_size
from modelvar.planning.plan import SPEEDUP_SETTINGS
from modelvar.running import job_commands, rule_functions
from modelvar.running.code_hash import code_version
from modelvar.running.rule_functions import with_known_signature
from modelvar.running.run_lock import hold_activity_lock
from modelvar.running.workflow_load import load_study
from modelvar.simulation import FIGURES as SIMULATION_FIGURES
from modelvar.findings import figures as findings_figures
from modelvar.study import figures as figure_registry
from modelvar.study.rounds import findings_state

# While this process lives, scripts/run.sh knows a run of this workflow is alive here and leaves
# Snakemake's locks alone (modelvar.running.run_lock).
hold_activity_lock(Path.cwd())

# The config checked (every problem at once, the schema's defaults filled in: what follows
# reads config[...]), the plan made (the same at every load, SLURM job steps too; probe fits
# only where jobs run) and the results folder readied where the command line calls for it:
# modelvar.running.workflow_load.
_LOADED = load_study(
    config,
    configfiles=workflow.configfiles,  # the files read: given, a host's, or the default
    schema_path=workflow.source_path("../workflow/schemas/config.schema.yaml"),
    argv=sys.argv[1:],
    main_process=workflow.is_main_process,
)
PLAN = _LOADED.plan


# Downloads need the internet, which cluster compute nodes often lack: run them on the head node.
localrules:
    prepare_dataset,
    design,
    dataset_overview,


RESULTS = config["results_dir"]
DATASETS = list(config["datasets"])
CLASSIFIERS = registry.classifier_names(config)
SETTINGS = config["classifier_settings"]
GROUPED = config["grouped"]["by"]
SIMULATION = config["simulation"]
DESIGN = config["design"]
TUNED = config["hparams"] == "tuned"


wildcard_constraints:
    dataset=r"[A-Za-z0-9][A-Za-z0-9._-]*",
    classifier=registry.wildcard(among=CLASSIFIERS),
    job=r"[a-z0-9_]+(\+\d+)?(\.c\d+)?\.r\d+(-\d+|\.k\d+-\d+)?",
    n_classes=r"\d+",


# Each rule's code version (a params entry, so that editing the library reruns the rule:
# Snakemake does not notice changes inside an imported package) is a hash of the import closure
# of its job's module, computed from the code (modelvar.running.code_hash), never listed here.
CODE = {command: code_version(command) for command in outputs.JOB_COMMANDS}

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
# Every job watches this process (and run.sh): when it ends, so do they (modelvar.run_watch).
run_watch.add_to_environment()
_PATHS = [str(SRC.parent), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in dict.fromkeys(_PATHS) if p)


# A log-only setting of the fit jobs reaches them through the environment: changing it must not
# rerun them (their command text and params decide that). The findings job, whose claims it
# changes, gets it as a param.
os.environ["MODELVAR_WARN_CHANGED_BELOW"] = str(
    config["perturbation"]["warn_changed_below"]
)


envvars:
    "MODELVAR_PYTHON",
    "PYTHONPATH",
    "MODELVAR_WARN_CHANGED_BELOW",


def modelvar_job(arguments):
    """The shell command of a job: `python -m modelvar ARGUMENTS` (Snakemake placeholders in
    ARGUMENTS, every value quoted with :q; modelvar.running.job_commands), built here so that
    it also works when the workflow is a module."""
    return job_commands.job_command(arguments)


def modelvar_job_from_file(arguments):
    """As modelvar_job, for a job whose arguments grow with the study (the findings job's
    tables): they reach it in a file, past the limit on one command line (ARG_MAX)."""
    return job_commands.job_command_from_file(arguments)


# ------------------------------------------------- the rules' helpers, keyed by the rule's name
def threads_of(rule_name):
    return rule_functions.threads(config, rule_name)


def resources_of(rule_name, job_of=None, **extra):
    """mem_mb and runtime of a rule's group (of a plan-sized job: `job_of(wildcards)`), per
    attempt, plus e.g. gpu=1 (modelvar.running.rule_functions)."""
    return rule_functions.resources(config, rule_name, job_of, **extra)


def code_of(rule_name):
    return CODE[outputs.rule(rule_name).command]


def log_of(rule_name):
    return rule_functions.log_path(RESULTS, rule_name)


def recipe_of(rule_name, inputs=None):
    """The input function of a job's recipe (modelvar.running.rule_functions.recipe_input)."""
    return rule_functions.recipe_input(workflow, config, rule_name, inputs)


def manifest_path(rule_name):
    """Where a job records what it wrote (modelvar.planning.outputs; `modelvar verify`)."""
    return outputs.manifest_path(RESULTS, rule_name)


# ----------------------------------------------------------------------------- the plan's jobs
def fit_job(wildcards):
    return PLAN.fit_job(wildcards.dataset, wildcards.classifier, wildcards.job)


def metrics_job(wildcards):
    return PLAN.metrics_job(wildcards.dataset, wildcards.classifier, wildcards.job)


def probe_job(wildcards):
    return probe_jobs.probe_job(PLAN, wildcards.dataset, wildcards.classifier)


def probe_file(dataset, classifier):
    return probe_jobs.probe_path(RESULTS, dataset, classifier)


def predictions_file(dataset, classifier, job):
    return tables.predictions_path(RESULTS, dataset, classifier, job)


def table_file(table, dataset, classifier, job):
    return tables.table_path(RESULTS, table, dataset, classifier, job)


def dataset_tables(dataset, table):
    return outputs.dataset_tables(RESULTS, PLAN, dataset, table)


def get_fit_inputs(wildcards):
    """The dataset (tuned: its best hparams; arriving in a job: its probe, whose measurement
    sets the fit job's limits: modelvar.planning.probe_jobs)."""
    files = get_dataset_files(wildcards)
    if (wildcards.dataset, wildcards.classifier) in PLAN.probe_jobs:
        files["probe"] = probe_file(wildcards.dataset, wildcards.classifier)
    if TUNED:
        files["hparams"] = (
            f"{RESULTS}/tuning/{wildcards.dataset}/{wildcards.classifier}/best.json"
        )
    return files


def get_cost_model_arg(wildcards):
    """`--cost-model FILE` where the config names one (a list, so that `:q` quotes each word)."""
    path = config["jobs"].get("cost_model")
    return ["--cost-model", path] if path else []


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


def get_dirichlet_cases():
    """The Dirichlet cases from the config, or the seed's three (modelvar.simulation.dirichlet)."""
    from modelvar.simulation.dirichlet import SEED_CASES

    return SIMULATION["dirichlet"].get("cases", SEED_CASES)


# ------------------------------------------------------------------ figures, findings, report
# the registry, not the plotting stack: loading the workflow imports no matplotlib
FIGURES = figure_registry.figures_of_design(DESIGN)
FIGURE_FORMATS = figure_registry.FORMATS
FIGURE_TABLES = figure_registry.tables_of(FIGURES)
GROUPED_FIGURES = [
    f.name for f in figure_registry.DATASET_FIGURES if f.part == "grouped"
]
FINDINGS_FIGURES = findings_figures.findings_figures(
    DESIGN, CLASSIFIERS, config["perturbation"], datasets=len(DATASETS)
)
# a sequential study's looks and state, for the findings job ("" for fixed repeats): its
# rounds file (modelvar.study.rounds) changes between rounds, never within one
SEQUENTIAL_JSON = findings_state(config, PLAN.rounds, PLAN.blocks())
# each classifier's colour in every figure, decided here once (the registry's) and handed to
# the figure jobs, which never import the classifiers: a colour reruns figures, not fits
COLOURS_JSON = json.dumps(
    {c: registry.colour(c, sorted(CLASSIFIERS)) for c in CLASSIFIERS}, sort_keys=True
)
# the levels, not the log-only warning threshold: changing it reruns no figure (the findings
# job gets it as a param of its own)
PERTURBATION_JSON = json.dumps(
    {k: v for k, v in config["perturbation"].items() if k != "warn_changed_below"},
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
        "design": outputs.design_path(RESULTS, wildcards.dataset),
    }


def get_findings_inputs(wildcards):
    return {
        **{
            t: [f for ds in DATASETS for f in dataset_tables(ds, t)]
            for t in outputs.FINDINGS_INPUT_TABLES
        },
        "meta": [f"{RESULTS}/datasets/{ds}.json" for ds in DATASETS],
        "design": [outputs.design_path(RESULTS, ds) for ds in DATASETS],
    }


# The report's first screen (Snakemake's global description): the study's answer, which the
# findings job writes, above this reading guide; the guide alone before a run.
REPORT_GUIDE = Path(workflow.source_path("../workflow/report/workflow.rst"))
ANSWER = f"{RESULTS}/findings/answer.rst"


def report_landing():
    """The answer above the guide, written where a load may write (not for a lint)."""
    if not _LOADED.writes:
        return str(REPORT_GUIDE)
    return outputs.report_landing(RESULTS, REPORT_GUIDE)


def refresh_report_landing():
    """On success: a report made after this run (--report-after-run, scripts/run.sh) reuses
    the workflow parsed before the run, when the landing text did not exist yet; point its
    global description at it now (the attribute the `report:` directive sets)."""
    from snakemake.sourcecache import infer_source_file

    workflow.report_text = infer_source_file(report_landing())


# ---------------------------------------------------------------------------- the run itself
def get_final_outputs(wildcards):
    """What `all` asks for: the manifest of every job, the last file it writes, which records
    every other output. Snakemake reruns a job for a missing output only where some job asks
    for that file; a missing output that no job reads is found at the load instead
    (modelvar.table_files.forget_damaged deletes its job's manifest, so the job runs again).
    """
    return outputs.planned_manifests(RESULTS, config, PLAN)


def start_run():
    """When jobs start (onstart; not for dry runs): one run per results folder, from any working
    directory; the invocation is recorded for `modelvar verify`'s regenerate commands; jobs
    that a changed config removed from the plan are set aside, never deleted, once the plan's
    tables of their partition exist (result_tables docstring)."""
    from modelvar.running.run_lock import start_run as start

    start(
        RESULTS, sys.argv[1:], workflow.main_snakefile, workflow.overwrite_configfiles
    )
    tidy_partitions(warn_foreign=True)


def tidy_partitions(*, warn_foreign=False):
    """Set aside the jobs no longer in the plan once the plan's tables of their partition exist
    (at a run's start, for an earlier interrupted run, and at its end)."""
    for line in outputs.stale_tables_messages(
        RESULTS, PLAN, GROUPED, warn_foreign=warn_foreign
    ):
        print(f"modelvar: {line}", file=sys.stderr)


def run_summary(log_files=()):
    """The run's summary; `log_files`: Snakemake's logs of this run (`log` in onsuccess)."""
    from modelvar.running.snakemake_log import restarts_line

    restarts = restarts_line(log_files)
    return outputs.run_summary(RESULTS, PLAN, [restarts] if restarts else [])


for _function in [f for name, f in globals().items() if name.startswith("get_")]:
    if inspect.isfunction(_function):
        with_known_signature(_function)
