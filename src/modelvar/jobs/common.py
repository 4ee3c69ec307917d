"""What every job shares: its manifest and the checked reads of the workflow's files."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def job_manifest(args: argparse.Namespace, rule: str, **job):
    from modelvar.table_files import Manifest

    return Manifest(getattr(args, "manifest", None), rule=rule, job=job)


def read_json(path) -> dict:
    from modelvar import table_files

    return table_files.read_json(path)


def read_tables(paths) -> pd.DataFrame:
    import pandas as pd

    from modelvar.table_files import read_parquet

    return pd.concat([read_parquet(p) for p in paths], ignore_index=True)

