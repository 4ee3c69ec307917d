"""What the ``pairwise`` and ``grouped`` jobs share: their prediction files checked to be the
job's, their tables, their manifest and log."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from modelvar.jobs.common import classifier_name, job_manifest

#: the help texts of the arguments declared here change no result (modelvar.running.code_hash)
NOT_RESULTS = ("help", "metavar")


def add_metrics_job_arguments(p: argparse.ArgumentParser) -> None:
    """What the pairwise and grouped jobs both read: a group of fit jobs' predictions."""
    p.add_argument("--predictions", nargs="+", required=True,
                   help="the prediction files of the job's fit jobs")
    p.add_argument("--meta", required=True, help="the dataset's JSON metadata")
    p.add_argument("--results", required=True, help="the study's results folder")
    p.add_argument("--dataset", required=True, help="the dataset")
    p.add_argument("--classifier", required=True, type=classifier_name, help="the classifier")
    p.add_argument("--job", required=True, help="the metrics job's id (names its tables)")

def job_tables(args: argparse.Namespace, names) -> dict[str, Path]:
    from modelvar.pipeline.result_tables import table_path

    return {t: Path(table_path(args.results, t, args.dataset, args.classifier, args.job))
            for t in names}


def check_predictions_belong(args: argparse.Namespace) -> None:
    """The prediction files are this dataset's and classifier's (their metadata says so)."""
    from modelvar.metrics.errors import MetricInputError
    from modelvar.pipeline.predictions import file_metadata

    for path in args.predictions:
        head, _ = file_metadata(path)
        if (head["dataset"], head["classifier"]) != (args.dataset, args.classifier):
            raise MetricInputError(
                f"{path} holds predictions of {head['dataset']}/{head['classifier']}, not "
                f"{args.dataset}/{args.classifier}")


def metrics_job_run(args: argparse.Namespace, command: str, table_names, compute) -> int:
    """A pipeline metrics job: check that the prediction files are this job's, run
    ``compute(tables, manifest)`` (→ rows per table) under the job's manifest, log the rows."""
    check_predictions_belong(args)
    with job_manifest(args, command, dataset=args.dataset, classifier=args.classifier,
                      job=args.job) as manifest:
        rows = compute(job_tables(args, table_names), manifest)
    logging.getLogger("modelvar.metrics").info(
        "%s", ", ".join(f"{name}: {n} rows" for name, n in rows.items()))
    return 0

