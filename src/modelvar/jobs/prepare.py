"""The ``prepare`` job: a dataset from its source, checked (rare classes, the OpenML
profile), written as the canonical parquet + JSON metadata."""

from __future__ import annotations

import argparse
import json
import logging

from modelvar.jobs.common import add_manifest, job_manifest

#: the command (modelvar.jobs: its help texts are no part of the code version)
NOT_RESULTS = ("help", "description", "metavar")
COMMAND = dict(
    name="prepare",
    help="(job) write a canonical dataset: parquet + JSON metadata",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_manifest(p)
    p.add_argument("--name", required=True, help="the dataset's name in the study")
    p.add_argument("--spec", required=True, help="the dataset's config entry as JSON")
    p.add_argument("--out-parquet", required=True, help="the canonical table to write")
    p.add_argument("--out-meta", required=True, help="its JSON metadata to write")
    p.add_argument("--openml-cache", default="resources/openml",
                   help="download cache for OpenML datasets")
    p.add_argument("--openml-server", default=None,
                   help="OpenML API URL (default: https://www.openml.org/api/v1/xml)")
    p.add_argument("--openml-timeout", type=float, default=60.0,
                   help="seconds to wait for any answer of the OpenML server")
    p.add_argument("--min-class-size", type=int, default=2,
                   help="the smallest class the split needs")
    p.add_argument("--rare-classes", choices=("stop", "keep"), default="stop",
                   help="a smaller class stops here (stop) or is kept, never tested (keep)")


def run(args: argparse.Namespace) -> int:
    from modelvar.data import load, write
    from modelvar.data.canonical import DatasetError
    from modelvar.data.splits import rare_classes

    spec = json.loads(args.spec)
    ds = load(args.name, spec, openml_cache=args.openml_cache, openml_server=args.openml_server,
              openml_timeout=args.openml_timeout)
    counts = ds.y.value_counts()
    rare = rare_classes({c: int(counts.get(c, 0)) for c in ds.classes}, args.min_class_size)
    log = logging.getLogger("modelvar.prepare")
    if rare and args.rare_classes == "stop":
        raise DatasetError(
            f"{args.name}: class(es) {rare} (label: samples) have fewer than the "
            f"{args.min_class_size} samples the split needs. A truncated or mis-parsed file "
            "often makes such a class; if the data is right, set split.rare_classes: keep to "
            "keep them in every training pool (they are never tested)")
    if spec.get("profile"):
        from modelvar.data.schema import count_few_valued, profile_problems

        problems, warnings = profile_problems(
            args.name, spec["profile"], n_rows=len(ds.y), n_numeric=len(ds.numeric_columns),
            n_categorical=len(ds.categorical_columns), n_classes=len(ds.classes),
            n_few_valued=count_few_valued(ds.X[ds.numeric_columns]))
        for warning in warnings:
            log.warning("%s", warning)
        if problems:
            raise DatasetError("; ".join(problems))
    if rare:
        ds.provenance["rare_classes"] = {"kept": rare, "min_class_size": args.min_class_size}
        log.warning("%s: keeping rare class(es) %s (fewer than %d samples): their rows stay in "
                    "every training pool and are never tested", args.name, rare,
                    args.min_class_size)
    with job_manifest(args, "prepare", dataset=args.name) as manifest:
        meta = write(ds, args.out_parquet, args.out_meta, manifest=manifest)
    logging.getLogger("modelvar.prepare").info(
        "%s: %d samples, %d features (%d categorical), classes %s, %d missing cells",
        args.name, meta["n_samples"], meta["n_features"], len(ds.categorical_columns),
        meta["class_counts"], meta["n_missing_cells"],
    )
    return 0

