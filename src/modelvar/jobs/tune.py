"""The ``tune`` job: random-search tuning of one classifier on one dataset."""

from __future__ import annotations

import argparse
import json

from modelvar.jobs.common import add_fit_inputs, add_manifest, job_manifest

#: the command (modelvar.jobs: its help texts are no part of the code version)
NOT_RESULTS = ("help", "description", "metavar")
COMMAND = dict(
    name="tune",
    help="(job) random-search tuning of one classifier on one dataset",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_manifest(p)
    add_fit_inputs(p)
    p.add_argument("--settings", help='a declared classifier\'s declaration as JSON: '
                   '{"declared": {...}} (modelvar.models.user), and "gpu" and "epochs" where '
                   'the config sets them')
    p.add_argument("--trials", type=int, required=True,
                   help="random-search trials (trial 0 = the defaults)")
    p.add_argument("--folds", type=int, default=3, help="stratified cross-validation folds")
    p.add_argument("--test-fraction", type=float, required=True,
                   help="fraction of rows set aside by the tuning split")
    p.add_argument("--root-seed", type=int, required=True,
                   help="root of every named random stream")
    p.add_argument("--threads", type=int, default=1, help="threads of the classifier")
    p.add_argument("--trials-out", required=True, help="the table of all trials to write")
    p.add_argument("--best-out", required=True, help="the best trial's JSON to write")


def run(args: argparse.Namespace) -> int:
    from modelvar.data import read
    from modelvar.models.registry import register_from_settings
    from modelvar.models.tuning import tune

    settings = json.loads(args.settings or "{}")
    register_from_settings(args.classifier, settings)
    ds = read(args.data, args.meta)
    trials, best = tune(ds, args.classifier, n_trials=args.trials, folds=args.folds,
                        test_fraction=args.test_fraction, root_seed=args.root_seed,
                        threads=args.threads, epochs=settings.get("epochs"))
    with job_manifest(args, "tune", dataset=ds.name, classifier=args.classifier) as manifest:
        manifest.write_parquet(trials, args.trials_out)
        manifest.write_text(json.dumps(best, indent=2, sort_keys=True) + "\n", args.best_out)
    return 0

