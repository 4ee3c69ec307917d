# Config validation, wildcard constraints, and the input functions of every rule.
import hashlib
import json
from pathlib import Path

from snakemake.utils import validate

from modelvar.cells import grid as cell_grid

validate(config, schema="../workflow/schemas/config.schema.yaml")

# Downloads need the internet, which cluster compute nodes often lack: run them on the head node.
localrules:
    prepare_dataset,

RESULTS = config["results_dir"]
DATASETS = list(config["datasets"])
CLASSIFIERS = list(config["classifiers"])
CELLS = [cell.id for cell in cell_grid(config["perturbation"])]
REPEATS = [f"{r:03d}" for r in range(config["split"]["repeats"])]
SRC = Path(workflow.basedir) / "src" / "modelvar"


wildcard_constraints:
    dataset=r"[A-Za-z0-9][A-Za-z0-9._-]*",
    classifier=r"lr-sgd|svm-sgd|xgb|mlp",
    cell=r"[a-z0-9]+(_[a-z0-9]+)*",
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


CODE = {
    "prepare": code_version("datasets/*.py", "datasets/embedded/registry.json"),
    "fit": code_version(
        "datasets/canonical.py", "seeding.py", "splits.py", "cells.py", "preprocess.py",
        "perturb.py", "hparams.py", "models.py", "fitting.py", "predictions.py",
    ),
    "tune": code_version(
        "datasets/canonical.py", "seeding.py", "splits.py", "preprocess.py", "hparams.py",
        "models.py", "tuning.py",
    ),
    "pairwise": code_version("metrics/*.py", "predictions.py", "repeat_tables.py"),
    "plot": code_version("plots.py"),
}


def resource(rule_name, key, default):
    return config.get("resources", {}).get(rule_name, {}).get(key, default)


TUNED = config["hparams"] == "tuned"


def fit_resource(key, default):
    """Resources of a fit job: MLP fits use `resources.fit_mlp` (falling back to `fit`)."""

    def get(wildcards):
        if wildcards.classifier == "mlp":
            return resource("fit_mlp", key, resource("fit", key, default))
        return resource("fit", key, default)

    return get


def get_fit_inputs(wildcards):
    files = get_dataset_files(wildcards)
    if TUNED:
        files["hparams"] = f"{RESULTS}/tuning/{wildcards.dataset}/{wildcards.classifier}/best.json"
    return files


def get_hparams_arg(wildcards, input):
    return f"--hparams {input.hparams}" if TUNED else ""


def get_dataset_spec(wildcards):
    return json.dumps(config["datasets"][wildcards.dataset], sort_keys=True)


def get_dataset_files(wildcards):
    base = f"{RESULTS}/datasets/{wildcards.dataset}"
    return {"data": f"{base}.parquet", "meta": f"{base}.json"}


def get_repeat_predictions(wildcards):
    base = f"{RESULTS}/{wildcards.dataset}/{wildcards.classifier}/{wildcards.cell}"
    return [f"{base}/predictions/repeat-{r}.parquet" for r in REPEATS]


def get_dataset_summaries(wildcards):
    return [
        f"{RESULTS}/{wildcards.dataset}/{clf}/{cell}/metrics/summary.parquet"
        for clf in CLASSIFIERS
        for cell in CELLS
    ]


def get_final_outputs():
    out = []
    if TUNED:
        out += [
            f"{RESULTS}/tuning/{ds}/{clf}/best.json" for ds in DATASETS for clf in CLASSIFIERS
        ]
    for ds in DATASETS:
        out += [f"{RESULTS}/{ds}/figures/repeat_means_violin.{ext}" for ext in ("png", "pdf")]
        out += [
            f"{RESULTS}/{ds}/{clf}/{cell}/metrics/pairwise.parquet"
            for clf in CLASSIFIERS
            for cell in CELLS
        ]
    return out
