"""The ``fit`` job: the runs of its cells, repeats and runs (modelvar.pipeline.fitting), with
the base hyperparameters merged from tuning and the classifier settings."""

from __future__ import annotations

import argparse
import json
import logging
import os
from pathlib import Path

from modelvar.jobs.common import job_manifest, read_json


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

