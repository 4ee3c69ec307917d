"""The ``fit`` job: the runs of its cells, repeats and runs (modelvar.pipeline.fitting), with
the base hyperparameters merged from tuning and the classifier settings."""

from __future__ import annotations

import argparse
import json
import logging
import os
from pathlib import Path

from modelvar.jobs.common import (
    add_fit_inputs,
    add_manifest,
    job_manifest,
    read_json,
)

#: the command (modelvar.jobs: its help texts are no part of the code version)
NOT_RESULTS = ("help", "description", "metavar")
COMMAND = dict(
    name="fit",
    help="(job) fit the runs of several repeats of perturbation cells",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_manifest(p)
    add_fit_inputs(p)
    p.add_argument("--cells", nargs="+", required=True,
                   help="perturbation cell ids (modelvar.study.cells)")
    p.add_argument("--repeats", type=int, nargs="+", required=True, help="repeat indices")
    p.add_argument("--runs", type=int, required=True, help="runs per repeat")
    p.add_argument("--run-block", type=int, nargs=2, metavar=("START", "STOP"),
                   help="fit only runs START to STOP - 1 of each repeat (default: all)")
    p.add_argument("--test-fraction", type=float, required=True,
                   help="fraction of rows in each repeat's test set")
    p.add_argument("--root-seed", type=int, required=True,
                   help="root of every named random stream")
    p.add_argument("--probabilities", choices=("dense", "compact", "none"), default="dense",
                   help="store every class's probability, or the per-sample statistics the "
                   "probabilistic metrics need (modelvar.pipeline.predictions)")
    p.add_argument("--predictions", required=True, help="the predictions file to write")
    p.add_argument("--runs-out", required=True, help="the runs table to write")
    p.add_argument("--hparams", help="tuned hyperparameters (best.json of the tune command)")
    p.add_argument("--settings", help='classifier settings as JSON: {"hparams": {...} '
                   '(override the defaults or tuned values), "epochs": N (classifiers that '
                   'train for epochs), "declared": {...} (a declared classifier\'s declaration)}')
    p.add_argument("--threads", type=int, default=1, help="threads of the classifier")
    p.add_argument("--progress-seconds", type=float, default=30.0,
                   help="log progress (runs done, ETA) at most this often")
    p.add_argument("--warn-changed-below", type=float,
                   help="warn when a data perturbation changes a smaller share of the numeric "
                   "training cells (default: $MODELVAR_WARN_CHANGED_BELOW, which the workflow "
                   "sets from perturbation.warn_changed_below, else 0.5)")


def _base_hparams(args: argparse.Namespace, settings: dict) -> dict | None:
    """Tuned hparams (--hparams), overridden by the classifier settings' ``hparams``."""
    base = None
    if args.hparams:
        tuned = read_json(args.hparams)
        if tuned.get("classifier") != args.classifier:
            raise ValueError(f"{args.hparams} holds hparams of {tuned.get('classifier')!r}, "
                             f"not {args.classifier!r}")
        base = tuned["hparams"]
    unknown = sorted(set(settings) - {"hparams", "epochs", "gpu", "declared"})
    if unknown:
        raise ValueError(f"classifier settings: unknown key(s) {unknown} (hparams, epochs, gpu, "
                         "declared)")
    if settings.get("hparams"):
        from modelvar.models.registry import spec

        names = {h.name for h in spec(args.classifier).space}
        bad = sorted(set(settings["hparams"]) - names)
        if bad:
            raise ValueError(f"{args.classifier}: unknown hyperparameter(s) {bad} in "
                             f"classifier_settings; known: {sorted(names)}")
        base = {**(base or {}), **settings["hparams"]}
    return base


def _warn_changed_below(args: argparse.Namespace) -> float:
    """The share below which a weak data perturbation is warned about: it changes the log only,
    so the workflow passes it in the environment (a job's command line is part of what decides
    whether Snakemake reruns it)."""
    if args.warn_changed_below is not None:
        return args.warn_changed_below
    value = os.environ.get("MODELVAR_WARN_CHANGED_BELOW", "0.5")
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"MODELVAR_WARN_CHANGED_BELOW={value!r} is not a number") from None


def run(args: argparse.Namespace) -> int:
    from modelvar.data.arrays import read_arrays
    from modelvar.models.registry import register_from_settings
    from modelvar.pipeline.fitting import fit_job
    from modelvar.study.cells import Cell

    settings = json.loads(args.settings) if args.settings else {}
    register_from_settings(args.classifier, settings)
    data = read_arrays(args.data, args.meta)
    base = _base_hparams(args, settings)
    runs = tuple(args.run_block) if args.run_block else (0, args.runs)
    if not 0 <= runs[0] < runs[1] <= args.runs:
        raise ValueError(f"--run-block {runs[0]} {runs[1]} is not a block of runs 0 to "
                         f"{args.runs}")
    logging.getLogger("modelvar.fit").info(
        "%s fit job: %d cells x %d repeats x runs %d-%d; CUDA_VISIBLE_DEVICES=%s; "
        "SLURM_JOB_ID=%s", args.classifier, len(args.cells), len(args.repeats), runs[0],
        runs[1] - 1, os.environ.get("CUDA_VISIBLE_DEVICES", "unset"),
        os.environ.get("SLURM_JOB_ID", "none"),
    )
    with job_manifest(args, "fit", dataset=data.name, classifier=args.classifier,
                   cells=args.cells, repeats=args.repeats, runs=list(runs)) as manifest:
        fit_job(
            data,
            classifier=args.classifier,
            cells=[Cell.parse(c) for c in args.cells],
            repeats=args.repeats,
            n_runs=args.runs,
            runs=runs,
            test_fraction=args.test_fraction,
            root_seed=args.root_seed,
            predictions_out=Path(args.predictions),
            runs_out=Path(args.runs_out),
            form=args.probabilities,
            base_hparams=base,
            threads=args.threads,
            epochs=settings.get("epochs"),
            manifest=manifest,
            progress_seconds=args.progress_seconds,
            warn_changed_below=_warn_changed_below(args),
        )
    return 0

