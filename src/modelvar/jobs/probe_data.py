"""The ``probe-data`` job: probe fits of a classifier on a prepared dataset's own rows, whose
measurement sets the limits of that dataset × classifier's fit jobs
(:mod:`modelvar.planning.probe_jobs`)."""

from __future__ import annotations

import argparse

from modelvar.jobs.common import add_manifest, classifier_name, job_manifest

#: the command (modelvar.jobs: its help texts are no part of the code version)
NOT_RESULTS = ("help", "description", "metavar")
COMMAND = dict(
    name="probe-data",
    help="(job) probe fits on a prepared dataset's own rows, for its fit jobs' limits",
    description=("Time a classifier's fits on growing subsets of a prepared dataset's training "
                 "rows (modelvar.planning.data_probe) and write the data factor, its spread "
                 "and the process's peak memory, from which the workflow sets the time and "
                 "memory limits of that dataset x classifier's fit jobs."),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_manifest(p)
    p.add_argument("--data", required=True, help="canonical dataset (parquet)")
    p.add_argument("--meta", required=True, help="its JSON metadata")
    p.add_argument("--classifier", required=True, type=classifier_name,
                   help="a built-in classifier whose fits run on the CPU")
    p.add_argument("--share", type=float, required=True,
                   help="CPU seconds the probe fits may spend")
    p.add_argument("--test-fraction", type=float, required=True,
                   help="fraction of rows in each repeat's test set")
    p.add_argument("--root-seed", type=int, required=True,
                   help="root of every named random stream")
    p.add_argument("--threads", type=int, default=1, help="the fit jobs' threads")
    p.add_argument("--cost-model", default=None,
                   help="the cost model file (default: the shipped one)")
    p.add_argument("--out", required=True, help="JSON file to write (the probe's result)")


def run(args: argparse.Namespace) -> int:
    import resource
    import sys

    import pandas as pd

    from modelvar.data.arrays import read_arrays
    from modelvar.data.schema import count_few_valued
    from modelvar.planning import cost_model, data_probe
    from modelvar.planning.plan import few_valued_share
    from modelvar.planning.probe_jobs import ProbeResult

    data = read_arrays(args.data, args.meta)
    cost = cost_model.load(args.cost_model)
    encoded = data.encoded
    n_numeric = encoded.numeric.shape[1]
    d = max(n_numeric + sum(encoded.n_levels), 1)
    n_few = count_few_valued(pd.DataFrame(encoded.numeric))
    n_classes = len(data.classes)

    def model_seconds(rows: int, width: int) -> float:  # a clean fit, as the plan prices one
        return cost.seconds(args.classifier, rows, width, n_classes, 1.0,
                            onehot_share=cost_model.onehot_share(n_numeric, width),
                            few_valued_share=few_valued_share(None, n_few, width))

    with job_manifest(args, "probe-data", dataset=data.name,
                      classifier=args.classifier) as manifest:
        full_rows = max(int(len(data.y) * (1 - args.test_fraction)), 1)
        found = data_probe.probe_data_arrays(
            args.classifier, data, data.name, args.test_fraction, args.root_seed, full_rows,
            model_seconds, args.share, threads=args.threads,
            say=lambda line: print(f"modelvar: {line}", file=sys.stderr, flush=True))
        factor = min(max(found.factor, 1 / data_probe.PLAUSIBLE_FACTOR),
                     data_probe.PLAUSIBLE_FACTOR)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kB
        result = ProbeResult(data.name, args.classifier, float(factor), float(found.spread),
                             found.rows, found.fits, float(found.cpu), float(peak_mb),
                             len(data.y), d, n_classes)
        manifest.write_text(result.to_json(), args.out)
    print(f"modelvar: {args.classifier} on {data.name}: data factor {factor:.3g} (spread "
          f"{found.spread:.2f}) from {found.fits} probe fit(s) up to {found.rows:,} rows, "
          f"{found.cpu:.1f} s CPU; peak memory {peak_mb:.0f} MB", file=sys.stderr)
    return 0
