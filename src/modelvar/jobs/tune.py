"""The ``tune`` job: random-search tuning of one classifier on one dataset."""

from __future__ import annotations

import argparse
import json

from modelvar.jobs.common import job_manifest


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

