"""What every job shares: its manifest and the checked reads of the workflow's files."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def job_manifest(args: argparse.Namespace, command: str, **job):
    """The job's manifest (``--manifest``): its rule is the one the workflow keys the manifest
    by (``…/manifests/RULE/…``, :func:`modelvar.planning.outputs.manifest_path`), so that a
    job never names its rule itself; outside the workflow, the ``command`` it runs."""
    from modelvar.table_files import Manifest, rule_of_manifest

    path = getattr(args, "manifest", None)
    return Manifest(path, rule=rule_of_manifest(path) or command, job=job)


def read_json(path) -> dict:
    from modelvar import table_files

    return table_files.read_json(path)


def read_tables(paths) -> pd.DataFrame:
    import pandas as pd

    from modelvar.table_files import read_parquet

    return pd.concat([read_parquet(p) for p in paths], ignore_index=True)

